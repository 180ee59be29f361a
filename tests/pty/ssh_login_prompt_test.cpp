// SshLoginPrompt: what a person types at an SSH login prompt in a terminal.
#include "pty/ssh_login_prompt.hpp"

#include <gtest/gtest.h>

namespace agentty::pty {
namespace {

TEST(SshLoginPromptTest, HiddenAnswerIsNeverEchoedAndEndsAtEnter) {
  SshLoginPrompt prompt;
  prompt.begin(/*echo=*/false);
  auto typed = prompt.feed("s3cr");
  EXPECT_EQ(typed.echo, "");
  EXPECT_FALSE(typed.answer);
  auto done = prompt.feed("et!\rlater");
  EXPECT_EQ(done.echo, "\r\n");
  ASSERT_TRUE(done.answer);
  EXPECT_EQ(*done.answer, "s3cret!");
  EXPECT_FALSE(prompt.active());
  // Bytes after Enter, and while no prompt is active, go nowhere.
  auto after = prompt.feed("more\r");
  EXPECT_FALSE(after.answer);
  EXPECT_EQ(after.echo, "");
}

TEST(SshLoginPromptTest, VisibleAnswerIsEchoed) {
  SshLoginPrompt prompt;
  prompt.begin(/*echo=*/true);
  auto typed = prompt.feed("123456\n");
  EXPECT_EQ(typed.echo, "123456\r\n");
  ASSERT_TRUE(typed.answer);
  EXPECT_EQ(*typed.answer, "123456");
}

TEST(SshLoginPromptTest, BackspaceRemovesWholeUtf8CharactersAndCtrlUClears) {
  SshLoginPrompt prompt;
  prompt.begin(true);
  auto typed = prompt.feed("ab\xc3\xa9\x7f");  // "abé", DEL
  EXPECT_EQ(typed.echo, "ab\xc3\xa9\b \b");
  typed = prompt.feed("c\b\x08");
  EXPECT_EQ(typed.echo, "c\b \b\b \b");
  typed = prompt.feed("xy\x15z\r");
  ASSERT_TRUE(typed.answer);
  EXPECT_EQ(*typed.answer, "z");
  // Hidden: the edits show nothing either.
  prompt.begin(false);
  typed = prompt.feed("pw\x7f\x7f\x7f\x15ok\r");
  EXPECT_EQ(typed.echo, "\r\n");
  EXPECT_EQ(*typed.answer, "ok");
}

TEST(SshLoginPromptTest, EscapeSequencesAndControlCharactersAreIgnored) {
  SshLoginPrompt prompt;
  prompt.begin(false);
  // Arrow keys (CSI and SS3), F5, bracketed paste markers, a tab.
  auto typed = prompt.feed("\x1b[Ap\x1bOBa\x1b[15~s\x1b[200~s\x1b[201~\t\r");
  ASSERT_TRUE(typed.answer);
  EXPECT_EQ(*typed.answer, "pass");
}

TEST(SshLoginPromptTest, EscapeSplitAcrossWrites) {
  SshLoginPrompt prompt;
  prompt.begin(false);
  (void)prompt.feed("a\x1b");
  (void)prompt.feed("[1;");
  auto typed = prompt.feed("5Cb\r");
  EXPECT_EQ(*typed.answer, "ab");
}

TEST(SshLoginPromptTest, CtrlCCancelsAndCtrlDCancelsOnlyAnEmptyLine) {
  SshLoginPrompt prompt;
  prompt.begin(false);
  auto typed = prompt.feed("abc\x03");
  EXPECT_TRUE(typed.cancelled);
  EXPECT_EQ(typed.echo, "^C\r\n");
  EXPECT_FALSE(prompt.active());

  prompt.begin(false);
  typed = prompt.feed("x\x04");
  EXPECT_FALSE(typed.cancelled);
  typed = prompt.feed("\x15\x04");
  EXPECT_TRUE(typed.cancelled);
}

TEST(SshLoginPromptTest, LongAnswersAreCut) {
  SshLoginPrompt prompt;
  prompt.begin(false);
  auto typed = prompt.feed(std::string(SshLoginPrompt::kMaxAnswer + 100, 'x') + "\r");
  ASSERT_TRUE(typed.answer);
  EXPECT_EQ(typed.answer->size(), SshLoginPrompt::kMaxAnswer);
}

TEST(SshLoginPromptTest, EndForgetsWhatWasTyped) {
  SshLoginPrompt prompt;
  prompt.begin(false);
  (void)prompt.feed("half");
  prompt.end();
  EXPECT_FALSE(prompt.active());
  prompt.begin(false);
  auto typed = prompt.feed("new\r");
  EXPECT_EQ(*typed.answer, "new");
}

TEST(SshLoginPromptTest, WipeClearsTheString) {
  std::string secret = "hunter2hunter2hunter2";
  wipe(secret);
  EXPECT_TRUE(secret.empty());
}

}  // namespace
}  // namespace agentty::pty
