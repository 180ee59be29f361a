#include "web/embedded_assets.hpp"

namespace agentty::web {

// Defined in the generated embedded_assets_data.cpp.
extern const EmbeddedAsset kEmbeddedAssets[];
extern const std::size_t kEmbeddedAssetCount;

std::span<const EmbeddedAsset> embedded_assets() {
  return {kEmbeddedAssets, kEmbeddedAssetCount};
}

const EmbeddedAsset* find_embedded_asset(std::string_view name) {
  for (const auto& asset : embedded_assets()) {
    if (asset.name == name) return &asset;
  }
  return nullptr;
}

}  // namespace agentty::web
