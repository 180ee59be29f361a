// Execution::end_login_hold with a person holding the execution: the hold
// ends and the person's control is released, as when an SSH login handed to
// someone on the web page succeeds (registry.cpp). release() was given a
// reference to the holder's name it then reset, and wrote the freed string
// into the recording's "released by" marker (an ASan heap-use-after-free,
// garbage in the .cast file without it).
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "support/registry_fixture.hpp"

namespace agentty::session {
namespace {

class LoginHold : public test_support::RegistryFixture {
 protected:
  void configure(RegistryOptions& options) override { options.record = true; }

  std::string recording(const std::string& id) {
    std::ifstream in(state_dir_ / "recordings" / (id + ".cast"));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

TEST_F(LoginHold, EndingItReleasesThePersonAndRecordsTheirName) {
  auto execution = start("exec cat");
  ASSERT_TRUE(execution);
  // Longer than a short string's inline buffer: the name lives on the heap.
  const std::string who = "web viewer at 127.0.0.1:54321";
  loop_.on_loop([&] {
    execution->hold_for_login("the login needs a password");
    EXPECT_TRUE(execution->take_over(who, std::nullopt));
    execution->end_login_hold();
    EXPECT_FALSE(execution->held());
    return 0;
  });
  EXPECT_NE(recording(execution->id()).find("\"released by " + who + "\""), std::string::npos)
      << recording(execution->id());
}

}  // namespace
}  // namespace agentty::session
