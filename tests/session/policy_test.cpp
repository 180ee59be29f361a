#include "session/policy.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "support/temp_dir.hpp"

namespace agentty::session {
namespace {

namespace fs = std::filesystem;

// Substring checks without gmock (the test binary links gtest only).
#define EXPECT_CONTAINS(text, needle) \
  EXPECT_NE(std::string(text).find(needle), std::string::npos) << "in: " << (text)
#define EXPECT_NOT_CONTAINS(text, needle) \
  EXPECT_EQ(std::string(text).find(needle), std::string::npos) << "in: " << (text)

PolicyConfig config_from(const std::map<std::string, std::string>& env) {
  auto config = PolicyConfig::from_environment(env);
  EXPECT_TRUE(config.ok()) << config.error();
  return config.ok() ? config.value() : PolicyConfig{};
}

// A fresh directory tree per test, removed afterwards.
class PolicyCwdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(root_ / "work/a/sub");
    fs::create_directories(root_ / "work/ab");
    fs::create_directories(root_ / "outside");
    std::ofstream(root_ / "work/a/file.txt") << "x";
  }

  Policy policy_with_roots(std::vector<std::string> roots) {
    PolicyConfig config;
    config.allowed_cwds = std::move(roots);
    return Policy(config);
  }

  test_util::TempDir temp_{"agentty-policy"};
  fs::path root_ = temp_.path();
};

TEST(PolicySideEffects, TableHasAll21UniqueNamesAndFiveDefaults) {
  const auto& names = side_effect_names();
  EXPECT_EQ(names.size(), 21u);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), 21u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const auto& info : side_effect_table()) {
    EXPECT_FALSE(info.description.empty()) << info.name;
    EXPECT_FALSE(info.safer_next_step.empty()) << info.name;
    EXPECT_EQ(side_effect_from_name(info.name), info.effect);
  }
  const std::set<SideEffect> expected = {
      SideEffect::kKillsAgentProcess, SideEffect::kModifiesOsSettings,
      SideEffect::kModifiesOsUserSettings, SideEffect::kModifiesProtectedFiles,
      SideEffect::kRunsInlineCode};
  EXPECT_EQ(default_blocked_side_effects(), expected);
  EXPECT_EQ(PolicyConfig{}.blocked_side_effects, expected);
}

TEST(PolicySideEffects, AcceptsAllowedDeclarations) {
  const Policy policy;
  EXPECT_TRUE(policy.check_side_effects({"NONE"}).ok());
  EXPECT_TRUE(policy.check_side_effects({"DELETES_FILES", "MAKES_NETWORK_REQUESTS"}).ok());
}

TEST(PolicySideEffects, RejectsEmptyUnknownDuplicateAndNoneCombined) {
  const Policy policy;
  auto empty = policy.check_side_effects({});
  ASSERT_FALSE(empty.ok());
  EXPECT_CONTAINS(empty.error(), "at least one");
  EXPECT_CONTAINS(empty.error(), "USES_DESTRUCTIVE_GIT_OPERATION");

  auto unknown = policy.check_side_effects({"deletes_files"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_CONTAINS(unknown.error(), "'deletes_files'");
  EXPECT_CONTAINS(unknown.error(), "case-sensitive");
  EXPECT_CONTAINS(unknown.error(), "Valid names: CHANGES_NETWORK_CONFIGURATION");

  auto duplicate = policy.check_side_effects({"DELETES_FILES", "DELETES_FILES"});
  ASSERT_FALSE(duplicate.ok());
  EXPECT_CONTAINS(duplicate.error(), "twice");

  auto combined = policy.check_side_effects({"NONE", "DELETES_FILES"});
  ASSERT_FALSE(combined.ok());
  EXPECT_CONTAINS(combined.error(), "NONE is exclusive");
}

TEST(PolicySideEffects, BlockedMessageNamesEveryBlockedCategoryWithItsNextStep) {
  const Policy policy;
  auto result = policy.check_side_effects(
      {"MODIFIES_WORKSPACE_FILES", "RUNS_INLINE_CODE", "KILLS_AGENT_PROCESS"});
  ASSERT_FALSE(result.ok());
  const auto& message = result.error();
  EXPECT_CONTAINS(message, "Blocked by policy before anything started");
  EXPECT_CONTAINS(message, "RUNS_INLINE_CODE, KILLS_AGENT_PROCESS");
  EXPECT_CONTAINS(message,
                  "- RUNS_INLINE_CODE: Write the code to a reviewable file in the "
                  "workspace");
  EXPECT_CONTAINS(message, "separate, inspectable step");
  EXPECT_CONTAINS(message, "- KILLS_AGENT_PROCESS: ");
  EXPECT_NOT_CONTAINS(message, "- MODIFIES_WORKSPACE_FILES");
  EXPECT_CONTAINS(message, "AGENTTY_BLOCKED_SIDE_EFFECTS");
}

TEST(PolicyConfigEnv, BlocklistParsingTrimsIgnoresEmptyAndCommaClears) {
  auto config =
      config_from({{"AGENTTY_BLOCKED_SIDE_EFFECTS", " DELETES_FILES ,, EXPOSES_SECRETS,"}});
  EXPECT_EQ(config.blocked_side_effects,
            (std::set<SideEffect>{SideEffect::kDeletesFiles, SideEffect::kExposesSecrets}));
  const Policy policy(config);
  EXPECT_TRUE(policy.check_side_effects({"RUNS_INLINE_CODE"}).ok());
  auto blocked = policy.check_side_effects({"DELETES_FILES"});
  ASSERT_FALSE(blocked.ok());
  EXPECT_CONTAINS(blocked.error(), "- DELETES_FILES: List exactly what would be deleted");

  auto cleared = config_from({{"AGENTTY_BLOCKED_SIDE_EFFECTS", ","}});
  EXPECT_TRUE(cleared.blocked_side_effects.empty());
  EXPECT_TRUE(Policy(cleared).check_side_effects({"RUNS_INLINE_CODE", "KILLS_AGENT_PROCESS"}).ok());
}

TEST(PolicyConfigEnv, UnknownBlocklistNameFailsNamingItAndListingValidNames) {
  auto config = PolicyConfig::from_environment(
      {{"AGENTTY_BLOCKED_SIDE_EFFECTS", "DELETES_FILES,runs_inline_code"}});
  ASSERT_FALSE(config.ok());
  EXPECT_CONTAINS(config.error(), "AGENTTY_BLOCKED_SIDE_EFFECTS");
  EXPECT_CONTAINS(config.error(), "'runs_inline_code'");
  EXPECT_CONTAINS(config.error(), "RUNS_INLINE_CODE, RUNS_PRIVILEGED_COMMANDS");
}

TEST(PolicyConfigEnv, InvalidRegexFailsNamingVariableMessageAndOffset) {
  for (const std::string variable :
       {"AGENTTY_DENY_COMMAND_REGEX", "AGENTTY_ALLOW_COMMAND_REGEX", "AGENTTY_REDACT_ENV_REGEX"}) {
    auto config = PolicyConfig::from_environment({{variable, "rm (-rf"}});
    ASSERT_FALSE(config.ok()) << variable;
    EXPECT_CONTAINS(config.error(), variable);
    EXPECT_CONTAINS(config.error(), "missing closing parenthesis");
    EXPECT_CONTAINS(config.error(), "offset 7");
  }
}

TEST(PolicyConfigEnv, NumbersParseWithSuffixesAndInvalidOnesNameTheVariable) {
  auto config = config_from({{"AGENTTY_MAX_EXECUTIONS", "3"},
                             {"AGENTTY_MAX_SESSIONS", " 2 "},
                             {"AGENTTY_MAX_SPOOL_BYTES", "10M"},
                             {"AGENTTY_MAX_TOTAL_SPOOL_BYTES", "1GiB"},
                             {"AGENTTY_MAX_REQUEST_BYTES", "65536"}});
  EXPECT_EQ(config.max_live_executions, 3u);
  EXPECT_EQ(config.max_sessions, 2u);
  EXPECT_EQ(config.max_spool_bytes, 10u << 20);
  EXPECT_EQ(config.max_total_spool_bytes, 1ull << 30);
  EXPECT_EQ(config.max_request_bytes, 65536u);

  for (const auto& [variable, value] : std::vector<std::pair<std::string, std::string>>{
           {"AGENTTY_MAX_EXECUTIONS", "ten"},
           {"AGENTTY_MAX_EXECUTIONS", "5M"},
           {"AGENTTY_MAX_SESSIONS", "0"},
           {"AGENTTY_MAX_SPOOL_BYTES", "-1"},
           {"AGENTTY_MAX_REQUEST_BYTES", "99999999999999999999"},
           {"AGENTTY_MAX_TOTAL_SPOOL_BYTES", "3T"}}) {
    auto bad = PolicyConfig::from_environment({{variable, value}});
    ASSERT_FALSE(bad.ok()) << variable << "=" << value;
    EXPECT_CONTAINS(bad.error(), variable + "='" + value + "'");
  }
}

TEST(PolicyConfigEnv, VariableTableListsEveryVariableWithDefaults) {
  std::set<std::string> names;
  for (const auto& variable : policy_config_variables()) {
    names.emplace(variable.name);
    EXPECT_FALSE(variable.default_value.empty());
    EXPECT_FALSE(variable.description.empty());
  }
  for (const char* name :
       {"AGENTTY_BLOCKED_SIDE_EFFECTS", "AGENTTY_ALLOWED_CWDS", "AGENTTY_DENY_COMMAND_REGEX",
        "AGENTTY_ALLOW_COMMAND_REGEX", "AGENTTY_REDACT_ENV_REGEX", "AGENTTY_MAX_EXECUTIONS",
        "AGENTTY_MAX_SESSIONS", "AGENTTY_MAX_SPOOL_BYTES", "AGENTTY_MAX_TOTAL_SPOOL_BYTES",
        "AGENTTY_MAX_REQUEST_BYTES", "AGENTTY_MAX_RECORDING_BYTES", "AGENTTY_MAX_RECORDINGS"}) {
    EXPECT_TRUE(names.contains(name)) << name;
  }
}

TEST(PolicyConfigEnv, AMissingAllowedCwdOrATinyRequestLimitFailsAtStartUp) {
  auto missing = PolicyConfig::from_environment({{"AGENTTY_ALLOWED_CWDS", "/tmp:/no/such/root"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_CONTAINS(missing.error(), "'/no/such/root' is not an existing directory");
  auto tiny = PolicyConfig::from_environment({{"AGENTTY_MAX_REQUEST_BYTES", "10"}});
  ASSERT_FALSE(tiny.ok());
  EXPECT_CONTAINS(tiny.error(), "AGENTTY_MAX_REQUEST_BYTES=10 is below the minimum");
  EXPECT_TRUE(PolicyConfig::from_environment({{"AGENTTY_MAX_REQUEST_BYTES", "64K"}}).ok());
}

TEST(PolicyConfigEnv, RelativeAllowedCwdFails) {
  auto config = PolicyConfig::from_environment({{"AGENTTY_ALLOWED_CWDS", "/tmp:work"}});
  ASSERT_FALSE(config.ok());
  EXPECT_CONTAINS(config.error(), "AGENTTY_ALLOWED_CWDS");
  EXPECT_CONTAINS(config.error(), "'work'");
}

TEST(PolicyCommand, DenyRegexRefusesNamingTheVariable) {
  const Policy policy(config_from({{"AGENTTY_DENY_COMMAND_REGEX", R"(\brm\s+-rf\b)"}}));
  EXPECT_TRUE(policy.check_command("ls -la").ok());
  auto refused = policy.check_command("cd /tmp && rm -rf build");
  ASSERT_FALSE(refused.ok());
  EXPECT_CONTAINS(refused.error(), "before anything started");
  EXPECT_CONTAINS(refused.error(), "AGENTTY_DENY_COMMAND_REGEX");
}

TEST(PolicyCommand, AllowRegexRefusesNonMatchingAndDenyWins) {
  const Policy policy(config_from({{"AGENTTY_ALLOW_COMMAND_REGEX", R"(^(git|ls)\b)"},
                                   {"AGENTTY_DENY_COMMAND_REGEX", R"(push\s+--force)"}}));
  EXPECT_TRUE(policy.check_command("git status").ok());
  EXPECT_TRUE(policy.check_command(join_argv_for_policy({"ls", "-l", "/tmp"})).ok());
  auto not_allowed = policy.check_command("curl example.com");
  ASSERT_FALSE(not_allowed.ok());
  EXPECT_CONTAINS(not_allowed.error(), "AGENTTY_ALLOW_COMMAND_REGEX");
  EXPECT_CONTAINS(not_allowed.error(), "does not match");
  auto denied = policy.check_command("git push --force");
  ASSERT_FALSE(denied.ok());
  EXPECT_CONTAINS(denied.error(), "AGENTTY_DENY_COMMAND_REGEX");
  // An explicit shell (open) is checked as its own command text.
  EXPECT_FALSE(policy.check_command("/bin/bash").ok());
}

TEST(PolicyCommand, TypedLineRefusalQuotesTheLineAndSaysNothingWasWritten) {
  const Policy policy(config_from({{"AGENTTY_DENY_COMMAND_REGEX", R"(\brm\s+-rf\b)"},
                                   {"AGENTTY_ALLOW_COMMAND_REGEX", R"(^(rm|ls)\b)"}}));
  EXPECT_TRUE(policy.check_typed_line("ls -la").ok());
  auto denied = policy.check_typed_line("rm -rf build");
  ASSERT_FALSE(denied.ok());
  EXPECT_CONTAINS(denied.error(), "nothing was written");
  EXPECT_CONTAINS(denied.error(), "`rm -rf build`");
  EXPECT_CONTAINS(denied.error(), "AGENTTY_DENY_COMMAND_REGEX");
  auto not_allowed = policy.check_typed_line("whoami");
  ASSERT_FALSE(not_allowed.ok());
  EXPECT_CONTAINS(not_allowed.error(), "AGENTTY_ALLOW_COMMAND_REGEX");
  EXPECT_CONTAINS(not_allowed.error(), "does not match");
}

TEST(PolicyTypedLines, LinesEndAtCrOrLfAndThePartialLineCarriesOver) {
  auto split = TypedLines::split("", "ls\rpwd\nech");
  EXPECT_EQ(split.lines, (std::vector<std::string>{"ls", "pwd"}));
  EXPECT_EQ(split.pending, "ech");
  split = TypedLines::split(split.pending, "o hi\r");
  EXPECT_EQ(split.lines, (std::vector<std::string>{"echo hi"}));
  EXPECT_EQ(split.pending, "");
  EXPECT_TRUE(TypedLines::split("", "no enter yet").lines.empty());
}

// bash and zsh run the line on ctrl-o (operate-and-get-next) as on Enter, and
// bash runs it after the editor on ctrl-x ctrl-e: `echo x` then ctrl-o ran a
// denied command unchecked.
TEST(PolicyTypedLines, CtrlOAndCtrlXCtrlESubmitTheLineLikeEnter) {
  EXPECT_EQ(TypedLines::split("", "rm -rf x\x0f").lines, std::vector<std::string>{"rm -rf x"});
  auto split = TypedLines::split("", "rm -rf x\x18");
  EXPECT_TRUE(split.lines.empty());
  split = TypedLines::split(split.pending, "\x05");
  EXPECT_EQ(split.lines, std::vector<std::string>{"rm -rf x"});
  EXPECT_EQ(split.pending, "");
  // ctrl-e alone moves the cursor to the end of the line: nothing is submitted.
  split = TypedLines::split("", "rm -rf\x05 x");
  EXPECT_TRUE(split.lines.empty());
  EXPECT_EQ(TypedLines::split(split.pending, "\r").lines, std::vector<std::string>{"rm -rf x"});
}

TEST(PolicyTypedLines, LineEditingKeysAndEscapesAreApplied) {
  // ctrl-u and ctrl-c clear, backspace/DEL erase a character (UTF-8 whole), ctrl-w a word.
  EXPECT_EQ(TypedLines::split("rm -rf /", "\x15ls\r").lines, std::vector<std::string>{"ls"});
  EXPECT_EQ(TypedLines::split("rm -rf /", "\x03").pending, "");
  EXPECT_EQ(TypedLines::split("", "lsx\x7f\r").lines, std::vector<std::string>{"ls"});
  EXPECT_EQ(TypedLines::split("", "r\xc3\xa9\b\r").lines, std::vector<std::string>{"r"});
  EXPECT_EQ(TypedLines::split("", "echo rm -rf\x17\x17ls\r").lines,
            std::vector<std::string>{"echo ls"});
  // Arrow keys and bracketed paste markers are not part of the checked text.
  EXPECT_EQ(TypedLines::split("", "\x1b[200~rm -rf x\x1b[201~\r").lines,
            std::vector<std::string>{"rm -rf x"});
}

TEST(PolicyTypedLines, ABackslashContinuationIsCheckedJoinedAsTheShellRunsIt) {
  // bash joins `rm -r\` and `f x` into `rm -rf x`: each part alone would
  // pass a deny rule for `rm -rf`. The part is checked too, as typed so far.
  auto split = TypedLines::split("", "rm -r\\\rf x\r");
  EXPECT_EQ(split.lines, (std::vector<std::string>{"rm -r", "rm -rf x"}));
  EXPECT_EQ(split.pending, "");
  // Across writes, and past ctrl-u and backspace, which edit only the
  // current physical line; ctrl-c drops the whole command, as in bash.
  split = TypedLines::split("", "rm -r\\\r");
  EXPECT_EQ(split.lines, std::vector<std::string>{"rm -r"});
  EXPECT_EQ(TypedLines::split(split.pending,
                              "junk\x15\x7f\x7f"
                              "f x\r")
                .lines,
            std::vector<std::string>{"rm -rf x"});
  EXPECT_EQ(TypedLines::split(split.pending, "\x03ls\r").lines, std::vector<std::string>{"ls"});
  // The current physical line is empty after a continuation (eof's rule).
  EXPECT_EQ(TypedLines::current_line(split.pending), "");
  EXPECT_EQ(TypedLines::current_line(TypedLines::split(split.pending, "f").pending), "f");
  // An escaped backslash ends the line.
  EXPECT_EQ(TypedLines::split("", "echo a\\\\\rls\r").lines,
            (std::vector<std::string>{"echo a\\\\", "ls"}));
}

TEST(PolicyCommand, JoinArgvUsesSingleSpaces) {
  EXPECT_EQ(join_argv_for_policy({"git", "commit", "-m", "two words"}), "git commit -m two words");
  EXPECT_EQ(join_argv_for_policy({}), "");
}

TEST(PolicyCommand, InvalidUtf8CommandStillChecked) {
  const Policy policy(config_from({{"AGENTTY_DENY_COMMAND_REGEX", "secret"}}));
  EXPECT_FALSE(policy.check_command("cat \xff\xfe secret").ok());
  EXPECT_TRUE(policy.check_command("cat \xff\xfe public").ok());
}

TEST(PolicyLimits, LiveAndSessionLimitsSayWhatToDo) {
  const Policy policy(
      config_from({{"AGENTTY_MAX_EXECUTIONS", "2"}, {"AGENTTY_MAX_SESSIONS", "1"}}));
  EXPECT_TRUE(policy.check_live_limit(1).ok());
  auto live = policy.check_live_limit(2);
  ASSERT_FALSE(live.ok());
  EXPECT_CONTAINS(live.error(), "`stop`");
  EXPECT_CONTAINS(live.error(), "AGENTTY_MAX_EXECUTIONS");
  EXPECT_TRUE(policy.check_session_limit(0).ok());
  auto sessions = policy.check_session_limit(1);
  ASSERT_FALSE(sessions.ok());
  EXPECT_CONTAINS(sessions.error(), "`close`");
  EXPECT_CONTAINS(sessions.error(), "AGENTTY_MAX_SESSIONS");
  EXPECT_TRUE(policy.check_request_size(4u << 20).ok());
  EXPECT_FALSE(policy.check_request_size((4u << 20) + 1).ok());
}

TEST(PolicyLimits, TotalSpoolRefusalNamesTheVariableAndTheFix) {
  const Policy policy(config_from({{"AGENTTY_MAX_TOTAL_SPOOL_BYTES", "1M"}}));
  EXPECT_TRUE(policy.check_total_spool((1u << 20) - 1).ok());
  auto refused = policy.check_total_spool(1u << 20);
  ASSERT_FALSE(refused.ok());
  EXPECT_CONTAINS(refused.error(), "AGENTTY_MAX_TOTAL_SPOOL_BYTES");
  EXPECT_CONTAINS(refused.error(), "`cleanup`");
  EXPECT_CONTAINS(refused.error(), "`stop`");
  EXPECT_CONTAINS(refused.error(), "before anything started");
}

TEST(PolicyConfigEnv, RecordingLimitsParseAndDefault) {
  const PolicyConfig defaults;
  EXPECT_EQ(defaults.max_recording_bytes, 1ull << 30);
  EXPECT_EQ(defaults.max_recordings, 500u);
  auto config =
      config_from({{"AGENTTY_MAX_RECORDING_BYTES", "64M"}, {"AGENTTY_MAX_RECORDINGS", "7"}});
  EXPECT_EQ(config.max_recording_bytes, 64ull << 20);
  EXPECT_EQ(config.max_recordings, 7u);
  auto bad = PolicyConfig::from_environment({{"AGENTTY_MAX_RECORDINGS", "7K"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_CONTAINS(bad.error(), "AGENTTY_MAX_RECORDINGS='7K'");
}

TEST_F(PolicyCwdTest, ResolvesDotDotAndReturnsCanonicalPath) {
  const Policy policy;
  auto resolved = policy.check_cwd((root_ / "work/a/sub/../sub/..").string());
  ASSERT_TRUE(resolved.ok()) << resolved.error();
  EXPECT_EQ(resolved.value(), (root_ / "work/a").string());
}

TEST_F(PolicyCwdTest, MissingAndNonDirectoryAreClearErrors) {
  const Policy policy;
  const std::string missing = (root_ / "nope").string();
  auto result = policy.check_cwd(missing);
  ASSERT_FALSE(result.ok());
  EXPECT_CONTAINS(result.error(), "cwd '" + missing + "' does not exist");
  auto file = policy.check_cwd((root_ / "work/a/file.txt").string());
  ASSERT_FALSE(file.ok());
  EXPECT_CONTAINS(file.error(), "is not a directory");
}

TEST_F(PolicyCwdTest, OmittedCwdIsTheServersDirectoryAndMustBeUnderARoot) {
  const auto saved = fs::current_path();
  fs::current_path(root_ / "outside");
  auto outside = policy_with_roots({(root_ / "work").string()}).check_cwd("");
  auto unrestricted = Policy().check_cwd("");
  fs::current_path(root_ / "work/a");
  auto inside = policy_with_roots({(root_ / "work").string()}).check_cwd("");
  fs::current_path(saved);
  ASSERT_FALSE(outside.ok());
  EXPECT_CONTAINS(outside.error(), "omitted");
  EXPECT_CONTAINS(outside.error(), "Pass a cwd under one of them");
  ASSERT_TRUE(unrestricted.ok());
  EXPECT_EQ(unrestricted.value(), (root_ / "outside").string());
  ASSERT_TRUE(inside.ok()) << inside.error();
  EXPECT_EQ(inside.value(), (root_ / "work/a").string());
}

TEST_F(PolicyCwdTest, RootAdmitsItselfAndDescendantsButNotSimilarPrefixSibling) {
  const Policy policy = policy_with_roots({(root_ / "work/a").string()});
  EXPECT_TRUE(policy.check_cwd((root_ / "work/a").string()).ok());
  EXPECT_TRUE(policy.check_cwd((root_ / "work/a/sub").string()).ok());
  auto sibling = policy.check_cwd((root_ / "work/ab").string());
  ASSERT_FALSE(sibling.ok());
  EXPECT_CONTAINS(sibling.error(), "outside the allowed directories");
  EXPECT_CONTAINS(sibling.error(), "AGENTTY_ALLOWED_CWDS");
  EXPECT_FALSE(policy.check_cwd((root_ / "work").string()).ok());
  // `..` leaving the root is resolved before the comparison.
  EXPECT_FALSE(policy.check_cwd((root_ / "work/a/../ab").string()).ok());
}

TEST_F(PolicyCwdTest, SymlinkInsideRootPointingOutsideIsRefused) {
  fs::create_directory_symlink(root_ / "outside", root_ / "work/a/escape");
  const Policy policy = policy_with_roots({(root_ / "work/a").string()});
  auto result = policy.check_cwd((root_ / "work/a/escape").string());
  ASSERT_FALSE(result.ok());
  EXPECT_CONTAINS(result.error(), "resolved to '" + (root_ / "outside").string() + "'");
}

TEST_F(PolicyCwdTest, SymlinkedRootIsResolvedToo) {
  fs::create_directory_symlink(root_ / "work/a", root_ / "alias");
  const Policy policy = policy_with_roots({(root_ / "alias").string()});
  auto result = policy.check_cwd((root_ / "work/a/sub").string());
  ASSERT_TRUE(result.ok()) << result.error();
  EXPECT_EQ(result.value(), (root_ / "work/a/sub").string());
}

TEST_F(PolicyCwdTest, ConfigFromEnvironmentSplitsRootsOnColons) {
  const Policy policy(config_from({{"AGENTTY_ALLOWED_CWDS", (root_ / "outside").string() + "::" +
                                                                (root_ / "work/ab").string()}}));
  EXPECT_TRUE(policy.check_cwd((root_ / "outside").string()).ok());
  EXPECT_TRUE(policy.check_cwd((root_ / "work/ab").string()).ok());
  EXPECT_FALSE(policy.check_cwd((root_ / "work/a").string()).ok());
}

}  // namespace
}  // namespace agentty::session
