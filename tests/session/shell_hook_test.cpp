// The hook line is read by whichever shell is at the prompt (an SSH login
// shell, a shell started inside a session): bash and zsh must both parse all
// of it, since each skips the other's branches but still parses them.
#include "session/shell_hook.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace agentty::session {
namespace {

// `shell -n FILE` (parse only) of `line`; its exit status, or -1 if it is not installed.
int parse_status(const std::string& shell, const std::string& line) {
  const std::string program = "/usr/bin/" + shell;
  if (!std::filesystem::exists(program)) return -1;
  const auto file = std::filesystem::temp_directory_path() /
                    ("agentty-hook-" + shell + "-" + std::to_string(::getpid()));
  std::ofstream(file) << line << "\n";
  const int status = std::system((program + " -n " + file.string() + " 2>/dev/null").c_str());
  std::filesystem::remove(file);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

TEST(ShellHook, TheTypedLineParsesInBashAndZsh) {
  const std::string line = hook_line("n0nce");
  EXPECT_EQ(line.find('\n'), std::string::npos) << "typed at a prompt: one line";
  EXPECT_EQ(line.front(), ' ') << "kept out of the history (ignorespace)";
  EXPECT_EQ(parse_status("bash", line), 0);
  const int zsh = parse_status("zsh", line);
  if (zsh == -1) GTEST_SKIP() << "zsh is not installed (scripts/install-deps installs it)";
  EXPECT_EQ(zsh, 0);
}

// Typed into a host's login shell, its echo takes rows until the hook
// erases it: longer, at 80x24 it scrolled the login's text off the screen
// (audit 47: so zsh's PROMPT_SP filler is in zsh_rc_hook only).
TEST(ShellHook, TheTypedLineLeavesALoginScreenItsText) {
  EXPECT_LE(hook_line("0123456789abcdef").size(), 1620u) << "80 bytes more: a row less";
  EXPECT_EQ(hook_line("n0nce").find("__agentty_sp()"), std::string::npos);
  EXPECT_NE(zsh_rc_hook("n0nce").find("__agentty_sp()"), std::string::npos);
}

TEST(ShellHook, AShellWithoutBashOrZshSyntaxRefusesTheLine) {
  // dash: so an sh login shell on a host gets sh_rearm_line (login_hook.cpp).
  if (!std::filesystem::exists("/usr/bin/dash")) GTEST_SKIP() << "dash is not installed";
  EXPECT_NE(parse_status("dash", hook_line("n0nce")), 0);
}

// rearm types this into sh (dash): into an sh session's own shell, and into
// a dash started in or exec'ed by a bash or zsh session (where the bash/zsh
// line is a syntax error). It must give PS1 sh's marks, $? unexpanded.
TEST(ShellHook, TheShRearmLineGivesDashAMarkedPrompt) {
  if (!std::filesystem::exists("/usr/bin/dash")) GTEST_SKIP() << "dash is not installed";
  const std::string line = sh_rearm_line("n0nce");
  EXPECT_EQ(line.find('\n'), std::string::npos) << "typed at a prompt: one line";
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << "no control bytes in its echo";
  EXPECT_EQ(parse_status("dash", line), 0);
  const auto base =
      std::filesystem::temp_directory_path() / ("agentty-sh-rearm-" + std::to_string(::getpid()));
  const auto script = base.string() + ".sh";
  const auto out = base.string() + ".out";
  std::ofstream(script) << "PS1='my$ '\n" << line << "\nprintf %s \"$PS1\" > " << out << "\n";
  ASSERT_EQ(std::system(("/usr/bin/dash " + script + " 2>/dev/null").c_str()), 0) << line;
  std::ifstream file(out);
  const std::string ps1((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::filesystem::remove(script);
  std::filesystem::remove(out);
  EXPECT_NE(ps1.find("\x1b]133;D;$?;p="), std::string::npos) << ps1;
  EXPECT_NE(ps1.find(";w=$PWD;k=sh;"), std::string::npos) << "ps's shell_cwd, on a host too";
  EXPECT_NE(ps1.find(";k=sh;n=n0nce\a\x1b]133;A;n=n0nce\amy$ \x1b]133;B;n=n0nce\a"),
            std::string::npos)
      << ps1;
}

// What `shell` makes of hook_dispatch_line typed after PS1='my$ ', with the
// hook in a file: "<PS1>|<whether __agentty_precmd is defined>|<whether the
// file is left>". Empty when the shell is not installed.
std::string dispatched_in(const std::string& shell) {
  const std::string program = "/usr/bin/" + shell;
  if (!std::filesystem::exists(program)) return "";
  const auto base = std::filesystem::temp_directory_path() /
                    ("agentty-dispatch-" + shell + "-" + std::to_string(::getpid()));
  const auto hook = base.string() + ".hook";
  const auto script = base.string() + ".sh";
  const auto out = base.string() + ".out";
  std::ofstream(hook) << hook_line("n0nce") << "\n";
  std::ofstream(script) << "PS1='my$ '\n"
                        << hook_dispatch_line(hook, "n0nce") << "\n"
                        << "{ printf '%s|' \"$PS1\"; command -v __agentty_precmd >/dev/null && "
                           "printf hooked; printf '|'; [ -e '"
                        << hook << "' ] && printf left; } > " << out << "\n";
  std::system((program + " " + script + " 2>/dev/null").c_str());
  std::ifstream file(out);
  std::string said((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  for (const auto& path : {hook, script, out}) std::filesystem::remove(path);
  return said;
}

// open(host) types this line: the shell that reads it picks its marks, so
// an account whose .profile execs another shell than its $SHELL works too.
TEST(ShellHook, TheDispatchLineLetsEachShellPickItsOwnMarks) {
  const std::string line = hook_dispatch_line("/tmp/tmp.AbC123", "n0nce");
  EXPECT_EQ(line.find('\n'), std::string::npos) << "typed at a prompt: one line";
  EXPECT_EQ(line.front(), ' ') << "kept out of the history (ignorespace)";
  EXPECT_LE(line.size(), 400u) << "its echo is erased, but first it takes rows";
  EXPECT_NE(line.find("stty iutf8"), std::string::npos) << "libssh sends no terminal modes";
  const std::string dash = dispatched_in("dash");
  if (!dash.empty()) {
    EXPECT_NE(dash.find(";k=sh;n=n0nce"), std::string::npos) << dash;
    EXPECT_NE(dash.find("my$ "), std::string::npos) << dash;
    EXPECT_EQ(dash.substr(dash.find('|')), "||") << "no hook functions, the file removed";
  }
  for (const std::string shell : {"bash", "zsh"}) {
    const std::string said = dispatched_in(shell);
    if (said.empty()) continue;  // not installed
    EXPECT_EQ(said.find("k=sh"), std::string::npos) << shell << ": " << said;
    EXPECT_NE(said.find("133;A;"), std::string::npos) << shell << ": " << said;
    EXPECT_EQ(said.substr(said.rfind('|', said.size() - 2)), "|hooked|")
        << shell << ": the hook sourced, the file removed: " << said;
  }
}

}  // namespace
}  // namespace agentty::session
