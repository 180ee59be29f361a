// ShellMarkParser and ShellIntegration: marks found in the raw stream however
// it is chunked, foreign look-alikes ignored, commands and human annotations
// reconstructed from the marks.
#include <gtest/gtest.h>

#include <string>

#include "session/execution.hpp"
#include "session/shell_integration.hpp"
#include "support/shell_feeder.hpp"

namespace agentty::session {
namespace {

using test_util::Feeder;
using test_util::kNonce;
using test_util::mark;

std::vector<ShellMark> parse_in_chunks(const std::string& stream, std::size_t chunk) {
  ShellMarkParser parser(kNonce);
  std::vector<ShellMark> marks;
  for (std::size_t at = 0; at < stream.size(); at += chunk) {
    parser.feed(std::string_view(stream).substr(at, chunk), 1 + at, marks);
  }
  return marks;
}

TEST(ShellMarkParser, FindsMarksWithPositionsInEveryChunking) {
  std::string prefix = "hello\r\n";
  std::string stream =
      prefix + mark("C") + "out\r\n" + mark("D;42") + "\x1b[1m$ \x1b]133;B;n=" + kNonce + "\x1b\\";
  for (std::size_t chunk = 1; chunk <= stream.size(); ++chunk) {
    auto marks = parse_in_chunks(stream, chunk);
    ASSERT_EQ(marks.size(), 3u) << "chunk " << chunk;
    EXPECT_EQ(marks[0].kind, 'C');
    EXPECT_EQ(marks[0].begin_seq, 1 + prefix.size());
    EXPECT_EQ(marks[0].end_seq, 1 + prefix.size() + mark("C").size());
    EXPECT_EQ(marks[1].kind, 'D');
    ASSERT_EQ(marks[1].fields.size(), 1u);
    EXPECT_EQ(marks[1].fields[0], "42");
    EXPECT_EQ(marks[2].kind, 'B');  // ST-terminated
    EXPECT_EQ(marks[2].end_seq, 1 + stream.size());
  }
}

TEST(ShellMarkParser, IgnoresLookAlikesAndOtherEscapes) {
  std::string stream =
      "\x1b]133;D;0;n=wrong\a"
      "\x1b]0;title\a"
      "\x1b[31mred\x1b[0m"
      "\x1b]133;D;0\a" +
      std::string("\x1b]133;C;n=") + kNonce + "\x18" + mark("A");
  for (std::size_t chunk = 1; chunk <= stream.size(); ++chunk) {
    auto marks = parse_in_chunks(stream, chunk);
    ASSERT_EQ(marks.size(), 1u) << "chunk " << chunk;
    EXPECT_EQ(marks[0].kind, 'A');
  }
}

TEST(ShellMarkParser, EscInsideAMarkRestartsScanning) {
  std::string stream = "\x1b]133;C\x1b[0m" + mark("C");
  auto marks = parse_in_chunks(stream, 3);
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0].kind, 'C');
}

TEST(ShellIntegration, AgentCommandBoundariesAndExitCode) {
  Feeder f;
  f.out(mark("D;0") + mark("A") + "$ " + mark("B"));
  EXPECT_TRUE(f.shell.prompt_ready());
  auto id = f.shell.submit_agent_command("echo hi", f.seq, false);
  f.out("echo hi\r\n");
  std::uint64_t begin = f.seq + mark("C").size();
  f.out(mark("C") + "hi\r\n");
  EXPECT_TRUE(f.shell.command_running());
  std::uint64_t end = f.seq;
  f.out(mark("D;3") + mark("A") + "$ " + mark("B"));
  const auto* command = f.shell.find(id);
  ASSERT_TRUE(command && command->ended());
  EXPECT_EQ(*command->exit_code, 3);
  EXPECT_EQ(command->output_begin, begin);
  EXPECT_EQ(command->output_end, end);
  EXPECT_EQ(command->prompt_end, f.seq);
  EXPECT_TRUE(f.shell.prompt_ready());
}

TEST(ShellIntegration, WhatThePromptHookPrintsBeforeThePromptIsKeptApart) {
  Feeder f;
  f.out(mark("D;0") + mark("A") + "$ " + mark("B"));
  auto id = f.shell.submit_agent_command("cd project", f.seq, false);
  f.out("cd project\r\n" + mark("C"));
  f.out(mark("D;0"));
  std::uint64_t after_begin = f.seq;
  f.out("direnv: loading .envrc\r\n\x1b[?2004h");
  std::uint64_t after_end = f.seq;
  f.out(mark("A") + "$ ");
  EXPECT_EQ(f.shell.find(id)->after_end, 0u);  // the prompt is not drawn yet
  f.out(mark("B"));
  const auto* command = f.shell.find(id);
  EXPECT_EQ(command->after_begin, after_begin);
  EXPECT_EQ(command->after_end, after_end);
}

TEST(ShellIntegration, APromptRightAfterTheEndMarkLeavesNothingBetween) {
  // sh's PS1 starts with the D mark, then the A mark: the prompt is not text
  // printed after the command.
  Feeder f;
  f.out(mark("D;0") + mark("A") + "# " + mark("B"));
  auto id = f.shell.submit_agent_command("false", f.seq, false);
  f.out("false\r\n" + mark("C") + mark("D;1") + mark("A") + "# " + mark("B"));
  const auto* command = f.shell.find(id);
  ASSERT_TRUE(command->ended());
  EXPECT_EQ(command->after_begin, command->after_end);
}

TEST(ShellIntegration, EmptyLineAndExtraPs0MarksDoNotMakeCommands) {
  Feeder f;
  f.out(mark("A") + "$ " + mark("B"));
  f.out("\r\n" + mark("D;0") + mark("A") + "$ " + mark("B"));  // Enter on an empty line
  EXPECT_EQ(f.shell.current(), nullptr);
  auto id = f.shell.submit_agent_command("echo a\necho b", f.seq, false);
  f.out(mark("C") + "a\r\n" + mark("C") + "b\r\n" + mark("D;0") + mark("A") + "$ " + mark("B"));
  ASSERT_TRUE(f.shell.find(id)->ended());
  EXPECT_EQ(f.shell.current()->id, id);
}

TEST(ShellIntegration, HumanCommandIsAnnotatedInTheAgentText) {
  Feeder f;
  std::uint64_t from = f.seq;
  std::string stream = mark("A") + "$ " + mark("B");
  f.out(stream);
  f.shell.on_input("ls\r", InputSource::human);
  std::string rest =
      "lx\b \bs\r\n" + mark("C") + "file\r\n" + mark("D;2") + mark("A") + "$ " + mark("B");
  f.out(rest);
  std::string text = f.shell.agent_text(stream + rest, from);
  EXPECT_EQ(text, "[human] $ ls\nfile\n[exit 2]\n$ ");
  // A page that starts after the prompt: the rest of the typing goes too.
  std::uint64_t typed_from = from + stream.size() + 2;
  EXPECT_EQ(f.shell.agent_text(rest.substr(2), typed_from), "[human] $ ls\nfile\n[exit 2]\n$ ");
}

// open(host) types the hook at the login shell's prompt: that prompt's line,
// the echo and what the line printed (its own erasing of them) are not the
// agent's text once the hook's first mark shows it took; before that mark
// (a hook that failed) everything shows.
TEST(ShellIntegration, TypedHookIsLeftOutOfTheAgentText) {
  Feeder f;
  const std::string login = "Welcome\r\nuser@host:~$ ";
  f.out(login);
  f.shell.hide_typed_hook({1 + std::string("Welcome\r\n").size(), 1});
  const std::string echo = " __agentty_n=x; printf '\\e[2F\\e[J'\r\n\x1b[2F\x1b[J";
  f.out(echo);
  EXPECT_NE(f.shell.agent_text(login + echo, 1).find("user@host:~$  __agentty_n=x;"),
            std::string::npos);
  const std::string prompt = mark("D;0") + mark("A") + "user@host:~$ " + mark("B");
  f.out(prompt);
  EXPECT_TRUE(f.shell.prompt_ready());
  EXPECT_EQ(f.shell.agent_text(login + echo + prompt, 1), "Welcome\nuser@host:~$ ");
  // A page that starts inside the hidden part.
  EXPECT_EQ(f.shell.agent_text(echo.substr(3) + prompt, 1 + login.size() + 3), "user@host:~$ ");
}

// A two-line prompt: the hook counts the prompt's earlier lines (the L
// mark), erases them with the echo, and the shell draws the whole prompt
// again; so the earlier line is left out of the text too, once, not twice.
TEST(ShellIntegration, TypedHookAtAMultiLinePromptLeavesOutTheWholeOldPrompt) {
  Feeder f;
  const std::string login = "Welcome\r\nuser@host ~/src\r\n$ ";
  f.out(login);
  const std::uint64_t last_row = 1 + login.size() - 2;
  const std::uint64_t first_row = 1 + std::string("Welcome\r\n").size();
  f.shell.hide_typed_hook({last_row, first_row, 1});
  const std::string echo = "case x; printf ...\r\n" + mark("L;1") + "\x1b[3F\x1b[J";
  const std::string prompt = mark("D;0") + mark("A") + "user@host ~/src\r\n$ " + mark("B");
  f.out(echo + prompt);
  EXPECT_EQ(f.shell.agent_text(login + echo + prompt, 1), "Welcome\nuser@host ~/src\n$ ");
  // A count larger than the lines known (the look-back's end) stops at the oldest.
  Feeder g;
  g.out(login);
  g.shell.hide_typed_hook({last_row, first_row});
  const std::string wild = "x\r\n" + mark("L;99999999999999999999");
  g.out(wild + prompt);
  EXPECT_EQ(g.shell.agent_text(login + wild + prompt, 1), "Welcome\nuser@host ~/src\n$ ");
}

// Each D mark says where its shell is now (w=, percent-encoded): the newest
// one wins, so a nested shell's directory shows while it runs, and the outer
// one's once it exits.
TEST(ShellIntegration, TheShellsDirectoryComesFromItsNewestDMark) {
  Feeder f;
  EXPECT_FALSE(f.shell.shell_cwd());
  f.out(mark("D;0;p=10;w=/home/u") + mark("A") + "$ " + mark("B"));
  EXPECT_EQ(f.shell.shell_cwd(), std::optional<std::string>("/home/u"));
  f.out("bash\r\n" + mark("C") + mark("D;0;p=11;w=/tmp/a%3Bb%0Ac%25") + mark("A") + "$ " +
        mark("B"));
  EXPECT_EQ(f.shell.shell_cwd(), std::optional<std::string>("/tmp/a;b\nc%"));
  f.out("exit\r\n" + mark("C") + mark("D;0;p=10;w=/home/u") + mark("A") + "$ " + mark("B"));
  EXPECT_EQ(f.shell.shell_cwd(), std::optional<std::string>("/home/u"));
}

// Enter at the prompt: not ready until the shell starts the line or draws a
// prompt again; a line left open (continuation prompt) stays not ready.
TEST(ShellIntegration, ALineEnteredAtThePromptIsPendingUntilItStartsOrAPromptComes) {
  Feeder f;
  f.out(mark("A") + "$ " + mark("B"));
  f.shell.on_input("echo 'it", InputSource::agent);
  EXPECT_FALSE(f.shell.line_entered());  // typing, no Enter yet
  f.shell.on_input("\r", InputSource::agent);
  f.out("echo 'it\r\n> ");
  EXPECT_TRUE(f.shell.line_entered());
  EXPECT_TRUE(f.shell.prompt_ready());  // flush still sees the prompt (sends ctrl-c)
  f.shell.on_input("\x03", InputSource::agent);
  f.out("^C\r\n" + mark("D;130") + mark("A") + "$ " + mark("B"));
  EXPECT_FALSE(f.shell.line_entered());

  f.shell.on_input("true\r", InputSource::human);
  EXPECT_TRUE(f.shell.line_entered());
  f.out("true\r\n" + mark("C"));
  EXPECT_FALSE(f.shell.line_entered());  // started
  f.out(mark("D;0") + mark("A") + "$ " + mark("B"));
  f.shell.on_input("\r", InputSource::agent);  // Enter on an empty line
  f.out("\r\n" + mark("D;0") + mark("A") + "$ " + mark("B"));
  EXPECT_FALSE(f.shell.line_entered());
}

// A prompt as the bash hook draws it, from the shell whose $$ is `pid`.
std::string prompt(int status, int pid) {
  return mark("D;" + std::to_string(status) + ";p=" + std::to_string(pid)) + mark("A") + "$ " +
         mark("B");
}

// A prompt whose precmd no longer runs (the user assigned PROMPT_COMMAND): no
// D mark, only the A mark's status and pid.
std::string bare_prompt(const std::string& status, int pid) {
  return mark("A;s=" + status + ";p=" + std::to_string(pid)) + "$ " + mark("B");
}

TEST(ShellIntegration, APromptFromTheSameShellEndsACommandWhoseEndMarkNeverCame) {
  Feeder f;
  f.out(prompt(0, 100));
  auto reset = f.shell.submit_agent_command("PROMPT_COMMAND=", f.seq, false);
  f.out("PROMPT_COMMAND=\r\n" + mark("C"));
  std::uint64_t end = f.seq;
  f.out(bare_prompt("0", 100));
  const auto* command = f.shell.find(reset);
  ASSERT_TRUE(command->ended());
  EXPECT_EQ(*command->exit_code, 0);
  EXPECT_EQ(command->output_end, end);
  EXPECT_EQ(command->after_begin, command->after_end);
  EXPECT_EQ(command->prompt_end, f.seq);
  EXPECT_TRUE(f.shell.prompt_ready());
  EXPECT_EQ(f.shell.shell_depth(), 1u);

  auto failing = f.shell.submit_agent_command("echo x; false", f.seq, false);
  f.out("echo x; false\r\n" + mark("C") + "x\r\n" + bare_prompt("1", 100));
  ASSERT_TRUE(f.shell.find(failing)->ended());
  EXPECT_EQ(*f.shell.find(failing)->exit_code, 1);
  EXPECT_TRUE(f.shell.prompt_ready());
}

TEST(ShellIntegration, APromptCarryingAStatusEndsNothingElse) {
  Feeder f;
  f.out(prompt(0, 100));
  // Redrawn before a pasted command starts: nothing runs yet.
  auto pasted = f.shell.submit_agent_command("echo a\necho b", f.seq, false);
  f.out(bare_prompt("0", 100) + "echo a\r\necho b\r\n");
  EXPECT_FALSE(f.shell.find(pasted)->ended());
  f.out(mark("C") + "a\r\nb\r\n" + prompt(0, 100));
  EXPECT_EQ(*f.shell.find(pasted)->exit_code, 0);
  // Another shell's prompt (a nested bash that inherited an exported PS1),
  // or one whose status bash left unexpanded (promptvars off).
  auto nested = f.shell.submit_agent_command("bash", f.seq, false);
  f.out(mark("C") + bare_prompt("0", 200));
  f.out(mark("A;s=$?;p=$$") + "$ " + mark("B"));
  EXPECT_FALSE(f.shell.find(nested)->ended());
  f.out("exit\r\n" + prompt(0, 100));
  EXPECT_TRUE(f.shell.find(nested)->ended());
  // The prompt printed by a command (echo "${PS1@P}"): readline's \[ \] are
  // still in it as SOH/STX, which the shell drops when it draws a prompt.
  auto printing = f.shell.submit_agent_command("echo \"${PS1@P}\"; echo more", f.seq, false);
  f.out(mark("C") + "\x01");
  f.out(mark("A;s=0;p=100") + "\x02$ \x01" + mark("B") + "\x02\r\nmore\r\n");
  EXPECT_FALSE(f.shell.find(printing)->ended());
  EXPECT_TRUE(f.shell.command_running());
  EXPECT_EQ(f.shell.shell_depth(), 1u);
  f.out(prompt(0, 100));
  EXPECT_TRUE(f.shell.find(printing)->ended());
}

TEST(ShellIntegration, NestedShellExitEndsTheInnerCommandAndTheOneThatStartedIt) {
  Feeder f;
  f.out(prompt(0, 100));
  auto outer = f.shell.submit_agent_command("bash --norc", f.seq, false);
  f.out(mark("C") + "bash-5.2$ ");
  f.shell.rearming();
  f.out("hook\r\n" + prompt(0, 200));  // the rearm line's own end, in the new shell
  EXPECT_FALSE(f.shell.find(outer)->ended());
  EXPECT_TRUE(f.shell.prompt_ready());
  EXPECT_EQ(f.shell.shell_depth(), 2u);
  auto inner = f.shell.submit_agent_command("(exit 4)", f.seq, false);
  f.out(mark("C") + prompt(4, 200));
  EXPECT_EQ(*f.shell.find(inner)->exit_code, 4);
  f.out("\r\n" + prompt(0, 200));      // an empty line in the inner shell ends nothing
  f.out("^C\r\n" + prompt(130, 200));  // nor does ctrl-c at its prompt
  EXPECT_FALSE(f.shell.find(outer)->ended());
  EXPECT_FALSE(f.shell.command_running());

  auto leave = f.shell.submit_agent_command("exit 7", f.seq, false);
  f.out(mark("C"));
  std::uint64_t leave_begin = f.seq;
  f.out("exit\r\n");
  std::uint64_t end = f.seq;
  f.out(prompt(7, 100));  // no D from the exiting shell: the outer one's carries the status
  EXPECT_EQ(f.shell.shell_depth(), 1u);
  const auto* left = f.shell.find(leave);
  ASSERT_TRUE(left->ended());
  EXPECT_EQ(*left->exit_code, 7);
  EXPECT_EQ(left->output_begin, leave_begin);
  EXPECT_EQ(left->output_end, end);
  EXPECT_EQ(left->prompt_end, f.seq);
  ASSERT_TRUE(f.shell.find(outer)->ended());
  EXPECT_EQ(*f.shell.find(outer)->exit_code, 7);
  EXPECT_EQ(f.shell.find(outer)->output_end, end);
  EXPECT_TRUE(f.shell.prompt_ready());

  // Back in the outer shell: an empty line changes nothing, commands are exact.
  f.out("\r\n" + prompt(0, 100));
  EXPECT_EQ(*f.shell.find(outer)->exit_code, 7);
  auto next = f.shell.submit_agent_command("false", f.seq, false);
  f.out(mark("C") + prompt(1, 100));
  EXPECT_EQ(*f.shell.find(next)->exit_code, 1);
}

TEST(ShellIntegration, InnerShellLeftWithCtrlDEndsTheCommandThatStartedIt) {
  Feeder f;
  f.out(prompt(0, 100));
  auto outer = f.shell.submit_agent_command("bash --norc", f.seq, false);
  f.out(mark("C") + "bash-5.2$ ");
  f.out("hook\r\n" + prompt(0, 200) + "exit\r\n" + prompt(3, 100));
  ASSERT_TRUE(f.shell.find(outer)->ended());
  EXPECT_EQ(*f.shell.find(outer)->exit_code, 3);
  EXPECT_EQ(f.shell.current()->id, outer);
  EXPECT_TRUE(f.shell.prompt_ready());
}

TEST(ShellIntegration, RearmThatReachesNoShellKeepsTheCommandRunning) {
  Feeder f;
  f.out(prompt(0, 100));
  auto python = f.shell.submit_agent_command("python3", f.seq, false);
  f.out(mark("C") + ">>> ");
  f.shell.rearming();  // typed into python: a SyntaxError, no marks
  f.out("  File \"<stdin>\"\r\nSyntaxError: invalid syntax\r\n>>> ");
  EXPECT_TRUE(f.shell.command_running());
  EXPECT_FALSE(f.shell.prompt_ready());
  f.out(prompt(5, 100));  // python exits with 5
  ASSERT_TRUE(f.shell.find(python)->ended());
  EXPECT_EQ(*f.shell.find(python)->exit_code, 5);
}

TEST(ShellIntegration, TwoNestedShellsUnwindOneAtATimeOrAllAtOnce) {
  Feeder f;
  f.out(prompt(0, 100));
  auto first = f.shell.submit_agent_command("bash", f.seq, false);
  f.out(mark("C") + prompt(0, 200));
  auto second = f.shell.submit_agent_command("bash", f.seq, false);
  f.out(mark("C") + prompt(0, 300));
  EXPECT_EQ(f.shell.shell_depth(), 3u);
  f.out(prompt(2, 200));  // the innermost exits: only `second` ends
  EXPECT_EQ(*f.shell.find(second)->exit_code, 2);
  EXPECT_FALSE(f.shell.find(first)->ended());
  auto third = f.shell.submit_agent_command("su", f.seq, false);
  f.out(mark("C") + prompt(0, 400));
  auto sleeping = f.shell.submit_agent_command("sleep 100", f.seq, false);
  f.out(mark("C"));
  f.out(prompt(255, 100));  // the whole chain went away at once (a dropped connection)
  EXPECT_EQ(f.shell.shell_depth(), 1u);
  for (auto id : {first, third, sleeping}) EXPECT_EQ(*f.shell.find(id)->exit_code, 255);
  EXPECT_TRUE(f.shell.prompt_ready());
}

// An exported PS1 with the marks (a venv's activate exports it) in a
// nested shell without the hook: its lines print no C and no D, so its
// prompt is not a marked one. Taken as one, the agent's next line waited for
// a C mark and every later line was refused (audit, session 51).
TEST(ShellIntegration, APromptInheritedByANestedShellIsNotAMarkedPrompt) {
  Feeder f;
  f.out(prompt(0, 100));
  auto outer = f.shell.submit_agent_command("bash --norc", f.seq, false);
  f.out(mark("C") + mark("A;s=0;p=200") + "$ " + mark("B"));
  EXPECT_TRUE(f.shell.command_running());
  EXPECT_FALSE(f.shell.prompt_ready());
  EXPECT_EQ(f.shell.shell_depth(), 1u);
  f.out("echo nested\r\nnested\r\n" + mark("A;s=0;p=200") + "$ " + mark("B"));
  EXPECT_TRUE(f.shell.command_running());
  EXPECT_FALSE(f.shell.find(outer)->ended());
  f.out("exit\r\n" + prompt(1, 100));
  EXPECT_EQ(*f.shell.find(outer)->exit_code, 1);
}

TEST(ShellIntegration, ShDetectsOutputAfterTheEchoedLine) {
  ShellIntegration shell(ShellKind::sh, kNonce);
  std::uint64_t seq = 1;
  auto out = [&](const std::string& bytes) {
    shell.on_output(bytes, seq);
    seq += bytes.size();
  };
  out(mark("D;0;p=7;k=sh") + mark("A") + "$ " + mark("B"));
  EXPECT_TRUE(shell.prompt_ready());
  auto id = shell.submit_agent_command("echo s; false", seq, false);
  std::string echo = "echo s; false\r\n";
  out(echo);
  std::uint64_t begin = seq;
  out("s\r\n" + mark("D;1;p=7;k=sh") + mark("A") + "$ " + mark("B"));
  const auto* command = shell.find(id);
  ASSERT_TRUE(command && command->ended());
  EXPECT_EQ(*command->exit_code, 1);
  EXPECT_EQ(command->output_begin, begin);
}

// Which shell marks the prompt decides, not the kind the session was opened
// with: an sh session whose shell ran `exec zsh` (same pid) and was rearmed
// has exact boundaries (the agent's line was typed as sh's `eval '...'` and
// its output taken from the echo, the answer said heuristic); a dash started
// in a zsh or bash session and rearmed has sh's PS1 marks and no C mark.
TEST(ShellIntegration, ShMarksFollowTheShellThatPrintsThem) {
  ShellIntegration sh(ShellKind::sh, kNonce);
  EXPECT_TRUE(sh.sh_marks()) << "before the first prompt: the session's kind";
  sh.on_output(mark("D;0;p=7;k=sh") + mark("A") + "$ " + mark("B"), 1);
  EXPECT_TRUE(sh.sh_marks());
  sh.on_output(mark("D;0;p=7;w=/tmp") + mark("A") + "% " + mark("B"), 100);
  EXPECT_FALSE(sh.sh_marks()) << "exec zsh, then rearm: the hook's marks";
  EXPECT_EQ(sh.shell_depth(), 1U);

  Feeder zsh;
  zsh.out(mark("D;0;p=9;w=/") + mark("A") + "% " + mark("B"));
  EXPECT_FALSE(zsh.shell.sh_marks());
  zsh.shell.submit_agent_command("sh", zsh.seq, false);
  zsh.out("sh\r\n" + mark("E;sh") + mark("C") + "$ ");
  zsh.out(mark("D;0;p=12;k=sh") + mark("A") + "$ " + mark("B"));
  EXPECT_TRUE(zsh.shell.sh_marks()) << "a rearmed dash inside";
  auto id = zsh.shell.submit_agent_command("echo in", zsh.seq, false);
  zsh.out("echo in\r\n");
  const auto begin = zsh.seq;
  zsh.out("in\r\n" + mark("D;0;p=12;k=sh") + mark("A") + "$ " + mark("B"));
  const auto* command = zsh.shell.find(id);
  ASSERT_TRUE(command && command->ended());
  EXPECT_EQ(command->output_begin, begin) << "output starts after the echo";
  zsh.out(mark("D;0;p=9;w=/") + mark("A") + "% " + mark("B"));
  EXPECT_FALSE(zsh.shell.sh_marks()) << "back in zsh";
}

// zsh starts its prompt with a CR (PROMPT_CR; the hook turns PROMPT_SP off,
// whose filler would be output): `printf done` was overwritten by the
// prompt in the agent's text, so the session's history lost it.
TEST(ShellIntegration, ZshOutputWithoutAFinalNewlineKeepsItsLineInTheText) {
  Feeder f;
  f.out(mark("D;0;p=9;w=/") + mark("A") + "% " + mark("B"));
  f.shell.submit_agent_command("printf done", f.seq, false);
  const auto from = f.seq;
  std::string bytes = "printf done\r\n" + mark("E;printf done") + mark("C") + "done" +
                      mark("D;0;p=9;w=/") + "\r" + mark("A") + "% " + mark("B");
  f.out(bytes);
  EXPECT_EQ(f.shell.agent_text(bytes, from), "printf done\ndone\n% ");
  // bash leaves the prompt after the output, as the terminal shows it.
  Feeder b;
  b.out(mark("D;0;p=9;w=/") + mark("A") + "$ " + mark("B"));
  b.shell.submit_agent_command("printf done", b.seq, false);
  const auto at = b.seq;
  bytes =
      "printf done\r\n" + mark("C") + "done" + mark("D;0;p=9;w=/") + mark("A") + "$ " + mark("B");
  b.out(bytes);
  EXPECT_EQ(b.shell.agent_text(bytes, at), "printf done\ndone$ ");
}

}  // namespace
}  // namespace agentty::session
