#include "session/pasted_echo.hpp"

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

TEST(PastedEcho, ReadlinesRedrawOfAPasteReadsOnce) {
  const auto text = to_text(kSqliteBytes);
  ASSERT_EQ(text, std::string(kStatement) + "\n        " + std::string(kStatement) + "\nsqlite> ");
  EXPECT_EQ(without_redrawn_paste(text, kStatement), std::string(kStatement) + "\nsqlite> ");
  // The command as typed may end with the newline that submitted it.
  EXPECT_EQ(without_redrawn_paste(text, std::string(kStatement) + "\n"),
            std::string(kStatement) + "\nsqlite> ");
}

TEST(PastedEcho, OutputBeforeTheEchoStays) {
  const std::string text = "older\nsqlite> a,\nb;\n        a,\nb;\n1\n";
  EXPECT_EQ(without_redrawn_paste(text, "a,\nb;"), "older\nsqlite> a,\nb;\n1\n");
}

TEST(PastedEcho, OneDrawingIsLeftAlone) {
  const std::string text = "a,\nb;\n1|2\nsqlite> ";
  EXPECT_EQ(without_redrawn_paste(text, "a,\nb;"), text);
}

TEST(PastedEcho, ASecondStatementThatOnlyStartsLikeItStays) {
  const std::string text = "a,\nb;\na,\nb;c\n";
  EXPECT_EQ(without_redrawn_paste(text, "a,\nb;"), text);
}

TEST(PastedEcho, OutputLaterInTheTextThatRepeatsTheBlockStays) {
  // Printed by the program, not drawn over the echo: not right after it.
  const std::string text = "a,\nb;\nresult\na,\nb;\n";
  EXPECT_EQ(without_redrawn_paste(text, "a,\nb;"), text);
}

TEST(PastedEcho, SingleLinesAndTabsAreNotTouched) {
  EXPECT_EQ(without_redrawn_paste("ab\n   ab\n", "ab"), "ab\n   ab\n");
  const std::string tabbed = "a\tb\nc\n  a\tb\nc\n";
  EXPECT_EQ(without_redrawn_paste(tabbed, "a\tb\nc"), tabbed);
}

}  // namespace
}  // namespace agentty::session
