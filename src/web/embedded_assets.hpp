// EmbeddedAssets: the built web UI (web-ui/dist: HTML, JS, CSS), compiled into
// the binary so the server needs no files and no network at run time. The
// data file is generated at build time by cmake/embed_assets.cmake from the
// esbuild output; it is never edited by hand nor committed.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace agentty::web {

struct EmbeddedAsset {
  std::string_view name;  // file name inside dist/, e.g. "terminal.js"
  std::string_view content_type;
  std::string_view body;
};

std::span<const EmbeddedAsset> embedded_assets();
const EmbeddedAsset* find_embedded_asset(std::string_view name);

}  // namespace agentty::web
