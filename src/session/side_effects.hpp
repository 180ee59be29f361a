// The side-effect categories an agent declares on `execute` (the schema's
// `side_effects` enum): each with its canonical name, a one-line description
// for the tool description, the safer next step a refusal suggests, and
// whether the default policy blocks it. Pure data; any thread.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace agentty::session {

enum class SideEffect {
  kChangesNetworkConfiguration,
  kChangesPackagesOrDependencies,
  kConsumesSignificantResources,
  kDeletesFiles,
  kExposesSecrets,
  kKillsAgentProcess,
  kMakesNetworkRequests,
  kModifiesOsSettings,
  kModifiesOsUserSettings,
  kModifiesOutsideWorkspace,
  kModifiesProductionServices,
  kModifiesProtectedFiles,
  kModifiesSecurityControls,
  kModifiesWorkspaceFiles,
  kNone,
  kOther,
  kRunsInlineCode,
  kRunsPrivilegedCommands,
  kStopsOrRestartsServices,
  kUnknown,
  kUsesDestructiveGitOperation,
};

struct SideEffectInfo {
  SideEffect effect;
  std::string_view name;             // canonical, case-sensitive (e.g. "DELETES_FILES")
  std::string_view description;      // one line, for the tool description
  std::string_view safer_next_step;  // what an agent should do when it is blocked
  bool blocked_by_default;
};

// All 21 categories in the order of the schema enum (alphabetical).
const std::vector<SideEffectInfo>& side_effect_table();
// The names alone, for the MCP inputSchema enum.
const std::vector<std::string>& side_effect_names();
const SideEffectInfo& side_effect_info(SideEffect effect);
std::optional<SideEffect> side_effect_from_name(std::string_view name);
std::set<SideEffect> default_blocked_side_effects();

// "A, B, ...": every canonical name, for error messages.
std::string side_effect_names_joined();

}  // namespace agentty::session
