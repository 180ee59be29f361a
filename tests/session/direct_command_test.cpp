#include "session/direct_command.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/temp_dir.hpp"

namespace agentty::session {
namespace {

namespace fs = std::filesystem;
using Env = std::map<std::string, std::string>;

// Runs argv (PATH-searched in the resulting environment) in `cwd` with the
// server's environment plus `overlay`, and returns its stdout with the lines
// sorted (bash orders the environment its own way).
std::string run_sorted(const std::vector<std::string>& argv, const Env& overlay,
                       const std::string& cwd) {
  Env merged;
  for (char** entry = environ; *entry; ++entry) {
    std::string text(*entry);
    auto equals = text.find('=');
    if (equals != std::string::npos) merged[text.substr(0, equals)] = text.substr(equals + 1);
  }
  for (const auto& [key, value] : overlay) merged[key] = value;
  std::vector<std::string> strings;
  for (const auto& [key, value] : merged) strings.push_back(key + "=" + value);
  std::vector<char*> envp, args;
  for (auto& s : strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);

  int out[2];
  EXPECT_EQ(::pipe(out), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::close(out[1]);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::setenv("PATH", merged["PATH"].c_str(), 1);  // execvpe searches the caller's PATH
    ::execvpe(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  std::string sorted;
  for (auto& line : lines) sorted += line + "\n";
  return sorted + "exit " + std::to_string(status);
}

class DirectCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(root_ / "work");
    fs::create_symlink(root_ / "work", root_ / "link");
    write_file("work/show.sh", "#!/bin/sh\necho \"args: $0 $*\"\nenv\n", 0755);
    write_file("work/noshebang", "echo run as a script\n", 0755);
    write_file("work/notexec.sh", "#!/bin/sh\necho hi\n", 0644);
  }

  void write_file(const std::string& name, const std::string& text, int mode) {
    std::ofstream(root_ / name) << text;
    fs::permissions(root_ / name, static_cast<fs::perms>(mode));
  }

  // The line run directly prints what `bash -c line` prints.
  void expect_same_as_bash(const std::string& line, const Env& overlay, const std::string& cwd) {
    auto direct = direct_command(line, overlay, cwd);
    ASSERT_TRUE(direct) << line << " was expected to skip bash";
    EXPECT_EQ(run_sorted(direct->argv, direct->env, cwd),
              run_sorted({"/bin/bash", "-c", line}, overlay, cwd))
        << line << " in " << cwd;
  }

  test_util::TempDir temp_{"agentty-direct"};
  fs::path root_ = temp_.path();
};

TEST_F(DirectCommandTest, SimpleCommandsSkipBashWithTheirWordsAsArgv) {
  auto direct = direct_command("  ls\t-la  /tmp ", {}, "");
  ASSERT_TRUE(direct);
  EXPECT_EQ(direct->argv, (std::vector<std::string>{"ls", "-la", "/tmp"}));
  auto option = direct_command("dd if=/dev/null of=/dev/null", {}, "");
  ASSERT_TRUE(option);
  EXPECT_EQ(option->argv[1], "if=/dev/null");
}

TEST_F(DirectCommandTest, EchoWithoutOptionsRunsCoreutilsEcho) {
  auto direct = direct_command("echo hi there", {}, "");
  ASSERT_TRUE(direct);
  EXPECT_EQ(direct->argv, (std::vector<std::string>{"/bin/echo", "hi", "there"}));
  EXPECT_FALSE(direct_command("echo -n hi", {}, ""));
  EXPECT_FALSE(direct_command("echo --help", {}, ""));
}

TEST_F(DirectCommandTest, AnythingBashWouldReadAsMoreThanWordsGoesToBash) {
  for (std::string line :
       {"ls | wc",    "ls > out",   "ls < in",    "ls; ls",     "ls && ls", "ls &",
        "echo $HOME", "echo `id`",  "echo 'a b'", "echo \"a\"", "ls *.txt", "ls ?",
        "ls [ab]",    "echo {a,b}", "ls ~",       "ls ~/x",     "echo a#b", "ls # comment",
        "A=1 env",    "ls\nls",     "(ls)",       "ls \\x",     "echo é",   "",
        "   ",        "!",          "echo a!b"}) {
    EXPECT_FALSE(direct_command(line, {}, "")) << line;
  }
}

TEST_F(DirectCommandTest, BuiltinsReservedWordsAndFunctionsGoToBash) {
  for (std::string line : {"cd /tmp", "exit 3", "pwd", "true", "false", "kill 1", "type ls",
                           "time ls", "if", "test -e x", "printf hi", "read x", "exec ls"}) {
    EXPECT_FALSE(direct_command(line, {}, "")) << line;
  }
  EXPECT_FALSE(direct_command("ls", {{"BASH_FUNC_ls%%", "() {  echo mine\n}"}}, ""));
  EXPECT_FALSE(direct_command("ls", {{"BASH_ENV", "/etc/profile"}}, ""));
  EXPECT_FALSE(direct_command("ls", {{"SHELLOPTS", "xtrace"}}, ""));
  EXPECT_TRUE(direct_command("ls", {{"BASH_ENV", ""}}, ""));
}

TEST_F(DirectCommandTest, ProgramsExecCannotRunAloneGoToBash) {
  std::string work = (root_ / "work").string();
  EXPECT_FALSE(direct_command("no-such-program-agentty", {}, ""));
  EXPECT_FALSE(direct_command("./noshebang", {}, work));   // bash runs it as a script
  EXPECT_FALSE(direct_command("./notexec.sh", {}, work));  // bash says Permission denied
  EXPECT_FALSE(direct_command("./missing", {}, work));
  EXPECT_FALSE(direct_command("ls", {{"PATH", "bin:/usr/bin"}}, ""));  // relative entry
  EXPECT_FALSE(direct_command("ls", {{"PATH", "/nonexistent::/usr/bin"}}, ""));
  EXPECT_TRUE(direct_command("ls", {{"PATH", "/usr/bin::/bin"}}, ""));  // found first
  EXPECT_TRUE(direct_command("./show.sh", {}, work));
}

TEST_F(DirectCommandTest, TheProgramSeesWhatBashWouldHaveGivenIt) {
  std::string work = (root_ / "work").string();
  std::string link = (root_ / "link").string();
  expect_same_as_bash("env", {}, work);
  expect_same_as_bash("env", {{"SHLVL", "4"}, {"FOO", "bar"}}, work);
  expect_same_as_bash("env", {}, "");
  expect_same_as_bash("/usr/bin/env", {{"PWD", link}}, work);  // kept: same directory
  expect_same_as_bash("env", {{"PWD", "/"}}, link);            // stale: the physical path
  expect_same_as_bash("./show.sh one two", {}, work);
  expect_same_as_bash("../work/show.sh", {}, work);
  expect_same_as_bash("show.sh x", {{"PATH", work + ":/usr/bin:/bin"}}, "/");
  expect_same_as_bash("echo hi there", {}, work);
  expect_same_as_bash("ls -a", {}, work);
}

}  // namespace
}  // namespace agentty::session
