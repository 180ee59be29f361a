#include "session/side_effects.hpp"

#include <algorithm>
#include <cstdlib>

namespace agentty::session {

namespace {

using enum SideEffect;

const std::vector<SideEffectInfo> kSideEffects = {
    {kChangesNetworkConfiguration, "CHANGES_NETWORK_CONFIGURATION",
     "Changes network interfaces, routes, firewall rules, DNS or proxy settings.",
     "Show the current configuration read-only first (ip addr, ip route, resolvectl status) and "
     "propose the exact change for the user to review and apply.",
     false},
    {kChangesPackagesOrDependencies, "CHANGES_PACKAGES_OR_DEPENDENCIES",
     "Installs, removes or upgrades system packages or project dependencies (apt, pip, npm "
     "install).",
     "Edit the dependency manifest in the workspace for review, or install into a project-local "
     "environment (a venv, node_modules) instead of the system.",
     false},
    {kConsumesSignificantResources, "CONSUMES_SIGNIFICANT_RESOURCES",
     "May use a lot of CPU, memory, disk or time (full builds, large test suites, big downloads).",
     "Run a smaller, scoped step first (one target, one test file, a sample of the data) with "
     "limited parallelism and a timeout_ms.",
     false},
    {kDeletesFiles, "DELETES_FILES",
     "Removes files or directories (rm, find -delete, git clean, truncating overwrites).",
     "List exactly what would be deleted first (ls, find without -delete, git clean -n), then "
     "move those files to a backup directory in the workspace instead, or ask the user to "
     "delete them.",
     false},
    {kExposesSecrets, "EXPOSES_SECRETS",
     "May print or send credentials, tokens, keys or private data (cat .env, printenv, key "
     "files).",
     "Check only that the secret is set (test -n \"$VAR\") or compare a fingerprint, never print "
     "its value; use handoff if a person must enter it.",
     false},
    {kKillsAgentProcess, "KILLS_AGENT_PROCESS",
     "May terminate the agent, its MCP client, agentty or their parents (kill, pkill -f, "
     "killall on broad patterns).",
     "Find the exact process id first (ps -o pid,args) and stop only that process, or use the "
     "`stop` tool for executions started here; never use broad patterns.",
     true},
    {kMakesNetworkRequests, "MAKES_NETWORK_REQUESTS",
     "Contacts other hosts (curl, wget, git fetch/push, package downloads, API calls).",
     "Use a local copy or cache if there is one, or make one read-only request to a known host "
     "and review the result before going further.",
     false},
    {kModifiesOsSettings, "MODIFIES_OS_SETTINGS",
     "Changes system-wide configuration: /etc files, systemd units, kernel parameters, system "
     "package manager config.",
     "Write the proposed change as a file or patch in the workspace and ask the user to review "
     "and apply it; read the current settings read-only meanwhile.",
     true},
    {kModifiesOsUserSettings, "MODIFIES_OS_USER_SETTINGS",
     "Changes per-user configuration: shell rc files, dotfiles, XDG config directories, user "
     "application preferences.",
     "Keep the setting in the project instead (a workspace config file, or `env` on this "
     "execution), or write the proposed dotfile change to a workspace file for the user.",
     true},
    {kModifiesOutsideWorkspace, "MODIFIES_OUTSIDE_WORKSPACE",
     "Writes files outside the project workspace.",
     "Write into the workspace (or a temporary directory made for this task) instead, and tell "
     "the user what should be copied where.",
     false},
    {kModifiesProductionServices, "MODIFIES_PRODUCTION_SERVICES",
     "Changes live production systems, deployments, databases or shared infrastructure.",
     "Run against a local or staging environment, or use a dry run (terraform plan, kubectl "
     "diff, --dry-run) and hand the real change to the user.",
     false},
    {kModifiesProtectedFiles, "MODIFIES_PROTECTED_FILES",
     "Changes protected or critical files: .git internals, credentials, CI secrets, system "
     "binaries, files the user marked read-only.",
     "Leave the protected file unchanged; write the proposed change as a patch in the workspace "
     "and ask the user to apply it.",
     true},
    {kModifiesSecurityControls, "MODIFIES_SECURITY_CONTROLS",
     "Changes security controls: permissions (chmod, chown), sudoers, SSH keys, firewall, "
     "SELinux/AppArmor, authentication settings.",
     "Describe the needed change and ask the user to make it; prefer the narrowest change (one "
     "file, one user) over broad ones such as chmod -R 777.",
     false},
    {kModifiesWorkspaceFiles, "MODIFIES_WORKSPACE_FILES",
     "Creates or edits files inside the project workspace (editing, builds, code generation, "
     "formatting).",
     "Write to a new file and review it before replacing the original, and check the result "
     "with git status and git diff.",
     false},
    {kNone, "NONE",
     "Read-only, no meaningful side effect (ls, cat, grep, git status). Must be the only entry.",
     "Declare the command's real categories; if it truly has none, ask the operator, who has "
     "blocked even read-only commands.",
     false},
    {kOther, "OTHER", "A side effect no other category covers; say what it is in `purpose`.",
     "Split the command into smaller steps with specific categories, or describe the effect in "
     "`purpose` and ask the user.",
     false},
    {kRunsInlineCode, "RUNS_INLINE_CODE",
     "Runs code given inline to an interpreter or shell (python -c, node -e, perl -e, heredocs "
     "piped into an interpreter, curl ... | sh).",
     "Write the code to a reviewable file in the workspace (for example scripts/check.py), then "
     "run that file in a separate, inspectable step that declares its real side effects.",
     true},
    {kRunsPrivilegedCommands, "RUNS_PRIVILEGED_COMMANDS",
     "Runs with elevated privileges (sudo, su, doas, pkexec, privileged containers).",
     "Do the unprivileged part yourself and ask the user (handoff) to run the privileged step, "
     "or use a user-level alternative (a venv, a user-local install).",
     false},
    {kStopsOrRestartsServices, "STOPS_OR_RESTARTS_SERVICES",
     "Stops, starts or restarts services and daemons (systemctl, service, docker restart).",
     "Check the service read-only first (systemctl status) and ask the user before restarting "
     "it; restart only the one service you changed.",
     false},
    {kUnknown, "UNKNOWN", "The agent cannot tell what the command may change.",
     "Inspect the program first (read its source, run it with --help or --dry-run), then declare "
     "the specific categories it has.",
     false},
    {kUsesDestructiveGitOperation, "USES_DESTRUCTIVE_GIT_OPERATION",
     "Rewrites or discards git history or uncommitted work (reset --hard, push --force, clean "
     "-fd, checkout -- ., branch -D).",
     "Save the current state first (a backup branch, git stash), prefer non-destructive forms "
     "(git revert, push --force-with-lease, git clean -n), or ask the user.",
     false},
};

}  // namespace

const std::vector<SideEffectInfo>& side_effect_table() {
  return kSideEffects;
}

const std::vector<std::string>& side_effect_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& info : kSideEffects) out.emplace_back(info.name);
    return out;
  }();
  return names;
}

const SideEffectInfo& side_effect_info(SideEffect effect) {
  const auto it = std::find_if(kSideEffects.begin(), kSideEffects.end(),
                               [&](const SideEffectInfo& info) { return info.effect == effect; });
  if (it == kSideEffects.end()) std::abort();  // every enumerator has a row
  return *it;
}

std::optional<SideEffect> side_effect_from_name(std::string_view name) {
  for (const auto& info : kSideEffects) {
    if (info.name == name) return info.effect;
  }
  return std::nullopt;
}

std::set<SideEffect> default_blocked_side_effects() {
  std::set<SideEffect> out;
  for (const auto& info : kSideEffects) {
    if (info.blocked_by_default) out.insert(info.effect);
  }
  return out;
}

std::string side_effect_names_joined() {
  std::string out;
  for (const auto& info : kSideEffects) {
    if (!out.empty()) out += ", ";
    out += info.name;
  }
  return out;
}

}  // namespace agentty::session
