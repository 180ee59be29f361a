#include "session/redactor.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <random>
#include <string>

#include "session/text_view.hpp"

namespace agentty::session {
namespace {

std::string all_at_once(Redactor redactor, std::string_view text) {
  std::string out = redactor.process(text);
  return out + redactor.finish();
}

// The same text fed in chunks of 0 to 19 bytes.
std::string in_random_chunks(Redactor redactor, std::string_view text, std::mt19937& rng) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t n = std::min<std::size_t>(text.size() - at, rng() % 20);
    out += redactor.process(text.substr(at, n));
    at += n;
  }
  return out + redactor.finish();
}

TEST(Redactor, ReplacesSecretsAndIgnoresShortValues) {
  Redactor redactor(std::vector<Redactor::Secret>{{"API_TOKEN", "tok-12345678"}, {"SHORT", "abc"}});
  EXPECT_EQ(all_at_once(redactor, "auth tok-12345678 ok abc"), "auth [REDACTED:API_TOKEN] ok abc");
  EXPECT_EQ(redactor.secrets().size(), 1u);
}

TEST(Redactor, LongestSecretWinsAtTheSamePosition) {
  Redactor redactor(std::vector<Redactor::Secret>{{"SHORT", "password"}, {"LONG", "password123"}});
  EXPECT_EQ(all_at_once(redactor, "password123 password"), "[REDACTED:LONG] [REDACTED:SHORT]");
}

TEST(Redactor, HoldsBackOnlyAPossibleSecretPrefix) {
  Redactor redactor(std::vector<Redactor::Secret>{{"KEY", "sk-live-abcdef"}});
  EXPECT_EQ(redactor.process("hello sk-li"), "hello ");
  EXPECT_EQ(redactor.held_bytes(), 5u);
  EXPECT_EQ(redactor.process("ve-abcdef!"), "[REDACTED:KEY]!");
  EXPECT_EQ(redactor.process("sk-"), "");
  EXPECT_EQ(redactor.process("x"), "sk-x");
  EXPECT_EQ(redactor.process("sk-live"), "");
  EXPECT_EQ(redactor.finish(), "sk-live");  // idle flush; stays usable
  EXPECT_EQ(all_at_once(redactor, "sk-live-abcdef"), "[REDACTED:KEY]");
}

TEST(Redactor, EveryTwoWaySplitGivesTheSameOutput) {
  Redactor redactor(
      std::vector<Redactor::Secret>{{"A", "abcdefghijkl"}, {"B", "cdefghij"}, {"C", "klmnopqr"}});
  const std::string text = "xxabcdefghijklmnopqr abcdefghij cdefghijklmnopqrs abcdefghijkl";
  const std::string expected = all_at_once(redactor, text);
  EXPECT_EQ(expected, "xx[REDACTED:A]mnopqr ab[REDACTED:B] [REDACTED:B][REDACTED:C]s [REDACTED:A]");
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    Redactor copy = redactor;
    std::string out = copy.process(text.substr(0, cut));
    out += copy.process(text.substr(cut));
    out += copy.finish();
    EXPECT_EQ(out, expected) << "cut at " << cut;
  }
}

TEST(Redactor, RandomChunkingsNeverLeakAndMatchTheUnstreamedResult) {
  std::mt19937 rng(11);
  // Secrets over a tiny alphabet overlap each other and the filler text a lot.
  const std::vector<Redactor::Secret> secrets = {
      {"S1", "abababab"}, {"S2", "aabbaabbab"}, {"S3", "babababba"}, {"S4", "bbbbbbbbbbbbaaab"}};
  const Redactor redactor(secrets);
  for (int round = 0; round < 300; ++round) {
    std::string text;
    while (text.size() < 2000) {
      if (rng() % 4 == 0) {
        text += secrets[rng() % secrets.size()].value;
      } else {
        text += static_cast<char>("abc"[rng() % 3]);
      }
    }
    const std::string expected = all_at_once(redactor, text);
    const std::string out = in_random_chunks(redactor, text, rng);
    ASSERT_EQ(out, expected);
    for (const auto& secret : secrets) ASSERT_EQ(out.find(secret.value), std::string::npos);
  }
}

// A terminal (and the agent's text view) does not show escape sequences and
// most C0 controls, so a secret split by them must go too; the invisible units
// inside it are kept after the marker (colours stay as the program set them).
TEST(Redactor, SecretSplitByEscapeSequencesAndControlsIsReplaced) {
  const Redactor redactor(std::vector<Redactor::Secret>{{"S", "SECRET_VALUE"}});
  EXPECT_EQ(all_at_once(redactor, "a SEC\x1b[1mRET_VALUE\x1b[0m b"),
            "a [REDACTED:S]\x1b[1m\x1b[0m b");
  // grep --color style, an OSC title, BEL and SO/SI between the characters.
  EXPECT_EQ(all_at_once(redactor,
                        "\x1b[01;31m\x1b[KSE\x1b[m\x1b[KCRET\x1b]0;t\x07_\x07V\x0e\x0f"
                        "ALUE!"),
            "\x1b[01;31m\x1b[K[REDACTED:S]\x1b[m\x1b[K\x1b]0;t\x07\x07\x0e\x0f!");
  // Visible bytes that break it (LF, CR, BS, a space) leave it alone.
  for (std::string text : {"SEC\nRET_VALUE", "SEC\rRET_VALUE", "SEC\bRET_VALUE", "SEC RET_VALUE"})
    EXPECT_EQ(all_at_once(redactor, text), text);
}

TEST(Redactor, EscapeSplitSecretIsReplacedWhateverTheChunking) {
  const Redactor redactor(
      std::vector<Redactor::Secret>{{"S", "SECRET_VALUE"}, {"T", "tok-12345678"}});
  const std::string text =
      "x SEC\x1b[1mRET\x1b[38;5;196m_VA\x1b]8;;http://a\x1b\\LUE y tok-\x1b[0m1234\x07"
      "5678 SECRET_VALUE SE\x1b[";
  const std::string expected = all_at_once(redactor, text);
  EXPECT_EQ(to_text(expected), "x [REDACTED:S] y [REDACTED:T] [REDACTED:S] SE");
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    for (std::size_t cut2 = cut; cut2 <= text.size(); cut2 += 7) {
      Redactor copy = redactor;
      std::string out = copy.process(text.substr(0, cut));
      out += copy.process(text.substr(cut, cut2 - cut));
      out += copy.process(text.substr(cut2));
      out += copy.finish();
      ASSERT_EQ(out, expected) << "cuts at " << cut << ", " << cut2;
    }
  }
}

// What is held back: a visible prefix with the escapes after it (until the
// next visible byte decides), and an unfinished escape sequence at the end.
TEST(Redactor, HoldsAPrefixFollowedByEscapesAndReleasesIt) {
  Redactor redactor(std::vector<Redactor::Secret>{{"S", "SECRET_VALUE"}});
  EXPECT_EQ(redactor.process("ok SEC"), "ok ");
  EXPECT_EQ(redactor.process("\x1b[1m"), "");
  EXPECT_EQ(redactor.process("\x1b[0"), "");
  EXPECT_EQ(redactor.process("mX"), "SEC\x1b[1m\x1b[0mX");
  EXPECT_EQ(redactor.process("plain \x1b[3"), "plain ");
  EXPECT_EQ(redactor.process("1m red"), "\x1b[31m red");
  EXPECT_EQ(redactor.held_bytes(), 0u);
}

// The documented limit: pieces farther apart than kMaxHiddenBytes of
// invisible bytes are not joined (and nothing is held back that long).
TEST(Redactor, PiecesFartherApartThanTheHiddenLimitAreNotJoined) {
  Redactor redactor(std::vector<Redactor::Secret>{{"S", "SECRET_VALUE"}});
  std::string colours;
  while (colours.size() <= Redactor::kMaxHiddenBytes) colours += "\x1b[1m";
  std::string out = redactor.process("SEC" + colours);
  EXPECT_EQ(out, "SEC" + colours);
  out += redactor.process("RET_VALUE") + redactor.finish();
  EXPECT_EQ(to_text(out), "SECRET_VALUE");
}

TEST(Redactor, RandomEscapesAndChunkingsNeverShowASecretInTheText) {
  std::mt19937 rng(7);
  const std::vector<Redactor::Secret> secrets = {{"S1", "abababab"}, {"S2", "aabbaabbab"}};
  const Redactor redactor(secrets);
  const std::vector<std::string> invisible = {"\x1b[1m",      "\x1b[0m", "\x07",
                                              "\x1b]0;x\x07", "\x1b(B",  "\x0f"};
  for (int round = 0; round < 200; ++round) {
    std::string text;
    while (text.size() < 600) {
      if (rng() % 5 == 0) {
        for (char c : secrets[rng() % secrets.size()].value) {
          text += c;
          if (rng() % 3 == 0) text += invisible[rng() % invisible.size()];
        }
      } else if (rng() % 4 == 0) {
        text += invisible[rng() % invisible.size()];
      } else {
        text += static_cast<char>("abc"[rng() % 3]);
      }
    }
    const std::string expected = all_at_once(redactor, text);
    const std::string out = in_random_chunks(redactor, text, rng);
    ASSERT_EQ(out, expected);
    const std::string shown = to_text(out);
    for (const auto& secret : secrets)
      ASSERT_EQ(shown.find(secret.value), std::string::npos) << shown;
  }
}

TEST(Redactor, FromEnvironmentMatchesNamesWithTheRegex) {
  ::setenv("AGENTTY_TEST_GITHUB_TOKEN", "ghp_0123456789abcdef", 1);
  ::setenv("AGENTTY_TEST_HARMLESS", "just-some-value", 1);
  auto redactor = Redactor::from_environment("(?i)_token$", {{"EXTRA", "extra-secret-1"}});
  ASSERT_TRUE(redactor.ok()) << redactor.error();
  EXPECT_EQ(all_at_once(*redactor, "ghp_0123456789abcdef just-some-value extra-secret-1"),
            "[REDACTED:AGENTTY_TEST_GITHUB_TOKEN] just-some-value [REDACTED:EXTRA]");
}

TEST(Redactor, InvalidNameRegexIsAnErrorWithTheOffset) {
  auto redactor = Redactor::from_environment("TOKEN(", {});
  ASSERT_FALSE(redactor.ok());
  EXPECT_NE(redactor.error().find("offset 6"), std::string::npos) << redactor.error();
  EXPECT_NE(redactor.error().find("missing closing parenthesis"), std::string::npos)
      << redactor.error();
}

TEST(SecretSet, AddsOnlyMatchingNamesWithLongEnoughValues) {
  auto set = SecretSet::create("(?i)(token|secret)");
  ASSERT_TRUE(set.ok()) << set.error();
  EXPECT_EQ(
      (*set)->add_matching(
          {{"API_TOKEN", "tok-12345678"}, {"MY_SECRET", "short"}, {"HOME_DIR", "/home/someone"}}),
      1u);
  EXPECT_EQ((*set)->add_matching({{"OTHER_TOKEN", "tok-12345678"}}), 0u);  // value known
  EXPECT_EQ((*set)->secrets().size(), 1u);
  EXPECT_EQ((*set)->redact("a tok-12345678 /home/someone"), "a [REDACTED:API_TOKEN] /home/someone");
}

TEST(SecretSet, EmptyRegexMatchesNoNameButAddStillWorks) {
  auto set = SecretSet::create("");
  ASSERT_TRUE(set.ok());
  EXPECT_EQ((*set)->add_from_environment(), 0u);
  EXPECT_TRUE((*set)->add("X", "value-1234"));
  EXPECT_FALSE((*set)->add("Y", "1234567"));  // shorter than kMinSecretBytes
  EXPECT_EQ((*set)->redact("value-1234"), "[REDACTED:X]");
}

// A secret registered while a stream is running is masked from the next
// chunk on, in every redactor that follows the set, including one that holds
// back a possible prefix of the new secret only from then on.
TEST(SecretSet, RedactorsPickUpSecretsAddedLater) {
  auto created = SecretSet::create("TOKEN");
  ASSERT_TRUE(created.ok());
  std::shared_ptr<SecretSet> set = created.value();
  Redactor first(set);
  Redactor second(set);
  EXPECT_EQ(first.process("before new-secret-1 "), "before new-secret-1 ");
  set->add_matching({{"RUN_TOKEN", "new-secret-1"}});
  EXPECT_EQ(first.process("after new-sec"), "after ");
  EXPECT_EQ(first.process("ret-1 ok"), "[REDACTED:RUN_TOKEN] ok");
  EXPECT_EQ(all_at_once(second, "x new-secret-1 y"), "x [REDACTED:RUN_TOKEN] y");
  Redactor copy(first);  // a copy (the recording's input redactor) follows the set too
  set->add("LATE", "late-secret-2");
  EXPECT_EQ(all_at_once(copy, "late-secret-2"), "[REDACTED:LATE]");
}

TEST(SecretSet, InvalidRegexNamesOffset) {
  auto set = SecretSet::create("(?<");
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.error().find("offset"), std::string::npos) << set.error();
}

}  // namespace
}  // namespace agentty::session
