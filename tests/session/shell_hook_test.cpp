// The hook line is read by whichever shell is at the prompt (an SSH login
// shell, a shell started inside a session): bash and zsh must both parse all
// of it, since each skips the other's branches but still parses them.
#include "session/shell_hook.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
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

TEST(ShellHook, AShellWithoutBashOrZshSyntaxRefusesTheLine) {
  // dash: the session then says the login shell is neither (see open).
  if (!std::filesystem::exists("/usr/bin/dash")) GTEST_SKIP() << "dash is not installed";
  EXPECT_NE(parse_status("dash", hook_line("n0nce")), 0);
}

}  // namespace
}  // namespace agentty::session
