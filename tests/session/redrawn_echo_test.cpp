#include "session/redrawn_echo.hpp"

#include <gtest/gtest.h>

#include "session/text_view.hpp"

namespace agentty::session {
namespace {

// What sqlite3 (readline 8.2) printed for a two-line statement pasted at
// "sqlite> " and accepted with Enter: the highlighted block, then a move up
// and the block again, then the next prompt.
constexpr std::string_view kSqliteBytes =
    "\x1b[7minsert into t values (1, 'x'),\x1b[27m\r\n\r\x1b[7m(2, 'y');\x1b[27m"
    "\x1b[A\binsert into t values (1, 'x'),\r\n\r(2, 'y');\r\n\x1b[?2004l\r"
    "\x1b[?2004hsqlite> ";
constexpr std::string_view kStatement = "insert into t values (1, 'x'),\n(2, 'y');";

TEST(RedrawnEcho, ReadlinesRedrawOfAPasteReadsOnce) {
  const auto text = to_text(kSqliteBytes);
  ASSERT_EQ(text, std::string(kStatement) + "\n        " + std::string(kStatement) + "\nsqlite> ");
  EXPECT_EQ(without_redrawn_echo(text, kStatement), std::string(kStatement) + "\nsqlite> ");
  // The command as typed may end with the newline that submitted it.
  EXPECT_EQ(without_redrawn_echo(text, std::string(kStatement) + "\n"),
            std::string(kStatement) + "\nsqlite> ");
}

TEST(RedrawnEcho, OutputBeforeTheEchoStays) {
  const std::string text = "older\nsqlite> a,\nb;\n        a,\nb;\n1\n";
  EXPECT_EQ(without_redrawn_echo(text, "a,\nb;"), "older\nsqlite> a,\nb;\n1\n");
}

TEST(RedrawnEcho, OneDrawingIsLeftAlone) {
  const std::string text = "a,\nb;\n1|2\nsqlite> ";
  EXPECT_EQ(without_redrawn_echo(text, "a,\nb;"), text);
}

TEST(RedrawnEcho, ASecondStatementThatOnlyStartsLikeItStays) {
  const std::string text = "a,\nb;\na,\nb;c\n";
  EXPECT_EQ(without_redrawn_echo(text, "a,\nb;"), text);
}

TEST(RedrawnEcho, OutputLaterInTheTextThatRepeatsTheBlockStays) {
  // Printed by the program, not drawn over the echo: not right after it.
  const std::string text = "a,\nb;\nresult\na,\nb;\n";
  EXPECT_EQ(without_redrawn_echo(text, "a,\nb;"), text);
}

TEST(RedrawnEcho, PromptToolkitsRedrawOfTheAcceptedLineReadsOnce) {
  // ipython: the line, the rows it reserves below, back up, the line again.
  const std::string bytes =
      "import os\r\r\n\r\r\n\r\r\n \x1b[3A\x1b[8D\x1b[?25l\rIn [1]: import os\r\n"
      "\x1b[?25h\rIn [2]: ";
  ASSERT_TRUE(moves_up(bytes));
  const auto text = to_text(bytes);
  ASSERT_EQ(text, "import os\nIn [1]: import os\nIn [2]: ");
  EXPECT_EQ(without_redrawn_echo(text, "import os"), "import os\nIn [2]: ");
}

TEST(RedrawnEcho, AProgramPrintingItsInputBackDoesNotMoveUp) {
  // cat: the terminal's echo, then cat's copy, with no move up between.
  EXPECT_FALSE(moves_up("hello\r\nhello\r\n"));
  EXPECT_FALSE(moves_up("\x1b[31mred\x1b[0m \x1b]0;title\x07\x1b[2B\x1b[5C"));
  EXPECT_TRUE(moves_up("a\x1bMb"));
  EXPECT_TRUE(moves_up("a\x1b[2Fb"));
  EXPECT_TRUE(moves_up(kSqliteBytes));
}

TEST(RedrawnEcho, TabsAreNotTouched) {
  const std::string tabbed = "a\tb\nc\n  a\tb\nc\n";
  EXPECT_EQ(without_redrawn_echo(tabbed, "a\tb\nc"), tabbed);
}

}  // namespace
}  // namespace agentty::session
