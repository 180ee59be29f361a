// The shell's modes the hook reports (audit 47): zsh's PROMPT_SP filler,
// printed by the hook after the D mark and ended by an S mark, and the line
// editor's vi mode (e=vi in D marks), which changes the keys that erase the
// line before execute types one.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "session/shell_hook.hpp"
#include "session/shell_integration.hpp"
#include "support/shell_feeder.hpp"
#include "support/temp_dir.hpp"

namespace agentty::session {
namespace {

using test_util::Feeder;
using test_util::mark;

// What zsh prints after `printf nonl` with the hook (80 columns): the
// command's output, the D mark, the filler, the S mark, then its prompt.
const std::string kFiller =
    "\x1b[1m\x1b[7m%\x1b[27m\x1b[1m\x1b[0m" + std::string(79, ' ') + "\r \r";

TEST(ShellModes, ZshPromptSpFillerIsNeitherOutputNorText) {
  Feeder f;
  f.out(mark("D;0;p=9;w=/") + mark("S") + "\r" + mark("A") + "% " + mark("B"));
  auto id = f.shell.submit_agent_command("printf nonl", f.seq, false);
  const auto from = f.seq;
  const std::string output = "printf nonl\r\n" + mark("E;printf nonl") + mark("C") + "nonl";
  const std::string filler = mark("D;0;p=9;w=/") + kFiller + mark("S");
  const std::string prompt = "\r\x1b[J" + mark("A") + "% " + mark("B");
  f.out(output);
  const auto output_end = f.seq;
  f.out(filler);
  const auto after_begin = f.seq;
  f.out(prompt);
  const auto* command = f.shell.find(id);
  ASSERT_TRUE(command && command->ended());
  EXPECT_EQ(command->output_end, output_end);
  EXPECT_EQ(command->after_begin, after_begin) << "the filler is not printed after the command";
  EXPECT_EQ(command->after_end, after_begin + 4) << "then only the prompt's CR and ED";
  const std::string stream = output + filler + prompt;
  EXPECT_EQ(f.shell.agent_text(stream, from), "printf nonl\nnonl\n% ");
  // A text page that ends inside the filler ends with the output's line.
  const auto inside = stream.find(kFiller) + 10;
  EXPECT_EQ(f.shell.agent_text(stream.substr(0, inside), from), "printf nonl\nnonl\n");
}

TEST(ShellModes, ViModeFromTheDMarkChoosesTheKeysThatEraseTheLine) {
  Feeder f;
  EXPECT_EQ(f.shell.clear_line_keys(), "\x15") << "no mark yet";
  f.out(mark("D;0;p=9;w=/") + mark("A") + "$ " + mark("B"));
  EXPECT_EQ(f.shell.clear_line_keys(), "\x15") << "emacs mode";
  f.out(mark("D;0;p=9;w=/;e=vi") + mark("A") + "$ " + mark("B"));
  EXPECT_EQ(f.shell.clear_line_keys(), "\x1bS") << "set -o vi";
  // A nested shell (`bash`) that has printed no D yet: its mode is unknown.
  f.shell.submit_agent_command("bash", f.seq, false);
  f.out("bash\r\n" + mark("C"));
  EXPECT_EQ(f.shell.clear_line_keys(), "\x15");
  f.out(mark("D;0;p=12;w=/") + mark("A") + "$ " + mark("B"));
  EXPECT_EQ(f.shell.clear_line_keys(), "\x15") << "the inner shell is in emacs mode";
  f.out("exit\r\n" + mark("C") + mark("D;0;p=9;w=/;e=vi") + mark("A") + "$ " + mark("B"));
  EXPECT_EQ(f.shell.clear_line_keys(), "\x1bS") << "back in the outer shell";
  f.out(mark("D;0;p=9;w=/") + mark("A") + "$ " + mark("B"));
  EXPECT_EQ(f.shell.clear_line_keys(), "\x15") << "set -o emacs";
}

// Runs zsh (not interactive) with the hook of a local zsh session's rc file,
// then `script`; its stdout after the hook's own marks (its preexec runs
// for the script too).
std::string zsh_with_hook(const std::string& before_hook, const std::string& script) {
  if (!std::filesystem::exists("/usr/bin/zsh")) return "no zsh";
  test_util::TempDir dir("agentty-shell-modes");
  const auto file = dir.path() / "script.zsh";
  const auto out = dir.path() / "out";
  std::ofstream(file) << before_hook << "\n" << zsh_rc_hook("abc123") << script << "\n";
  const std::string command = "/usr/bin/zsh -f " + file.string() + " >" + out.string() + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "failed: " + text;
  const auto started = text.rfind(mark("C"));
  return started == std::string::npos ? text : text.substr(started + mark("C").size());
}

// What the hook's precmd runs after the D mark.
const std::string kFillerCall = "${__atS:+__agentty_sp}";

// The filler is zsh's own (Src/utils.c, preprompt): PROMPT_EOL_MARK, then
// spaces to the last column ($COLUMNS, read at each prompt: a resize counts),
// CR, spaces over the mark, CR.
TEST(ShellModes, TheHooksFillerIsZshsPromptSpFiller) {
  if (!std::filesystem::exists("/usr/bin/zsh")) GTEST_SKIP() << "zsh is not installed";
  const std::string sign = ::geteuid() == 0 ? "#" : "%";
  const std::string end = mark("S");
  EXPECT_EQ(
      zsh_with_hook("", "COLUMNS=20; " + kFillerCall),
      "\x1b[1m\x1b[7m" + sign + "\x1b[27m\x1b[1m\x1b[0m" + std::string(19, ' ') + "\r \r" + end);
  EXPECT_EQ(zsh_with_hook("", "COLUMNS=30; PROMPT_EOL_MARK='%F{red}<<%f'; " + kFillerCall),
            "\x1b[31m<<\x1b[39m" + std::string(28, ' ') + "\r  \r" + end);
  EXPECT_EQ(zsh_with_hook("", "COLUMNS=10; PROMPT_EOL_MARK=''; " + kFillerCall),
            std::string(10, ' ') + "\r\r" + end);
  EXPECT_EQ(zsh_with_hook("unsetopt prompt_sp", "COLUMNS=10; " + kFillerCall + "; print -n done"),
            "done")
      << "the user had PROMPT_SP off: no filler";
  EXPECT_EQ(zsh_with_hook("", "COLUMNS=10; unsetopt prompt_cr; " + kFillerCall + "; print -n done"),
            "done")
      << "zsh prints it only with PROMPT_CR";
  EXPECT_EQ(zsh_with_hook("", "[[ -o prompt_sp ]] && print -n on; print -n off"), "off")
      << "zsh's own filler, printed before precmd, is off";
}

}  // namespace
}  // namespace agentty::session
