// Installing agentty's prompt hook in a login shell that agentty did not
// start with the hook (open(host): the remote login shell), by typing the
// hook line into it as the agent.
//
// The hook is typed only when the shell can take it: the execution is live,
// nobody holds it (a person at the terminal, or an SSH login a person is
// doing), its output has gone quiet while it waits for input, and the
// cursor's line is not a password prompt (the line would be sent as the
// answer). A shell whose marks already arrive (rearmed) is left alone.
//
// After an SSH login handed to a person, open returns at once and
// type_hook_after_login types the hook when the login ends: a detached
// coroutine on the loop that holds the execution only while it waits, and
// ends when it has typed the hook, when the execution ends (a failed or
// abandoned login, stop, close, server shutdown), or kAfterLogin after the
// login without a moment to type it (the agent can still rearm then).
//
// Threading: the one I/O event loop, like Execution.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <memory>

#include "base/expected.hpp"

namespace agentty::session {
class Execution;
}

namespace agentty::mcp::tools {

// How long after the login (or after a person releases the terminal) the
// hook waits for a quiet prompt before giving up.
inline constexpr std::chrono::milliseconds kAfterLogin{30000};

// Why a session on a host may never show a marked prompt, for open's and
// execute(session=)'s answers: the hook typed is for bash, zsh or sh,
// whatever the account's login shell is.
inline constexpr const char* kHookNeedsBash =
    "On a host the hook is typed into the account's login shell and knows bash, zsh and sh: if "
    "the login shell is another (fish, csh; its error is in output), no marked prompt will come. "
    "Run "
    "commands with execute(host=...) instead, or type bash with write and then "
    "write(action=\"rearm\").";

// A password, passphrase, PIN... prompt on the cursor's line (unless the
// terminal is known to echo).
bool shows_secret_prompt(session::Execution& execution);
// The hook may be typed now (see the top of this file).
bool can_type_hook(session::Execution& execution);
// Types ctrl-u, the hook line and Enter as the agent; false when refused
// (held) or when the execution has no shell integration. On a host the line
// first restores the session's env and cwd (a login shell starts without
// them).
boost::asio::awaitable<bool> type_hook(session::Execution& execution);
// The same without restoring anything (rearm: the shell in the foreground
// is another one, with its own directory); the write's error when refused.
Expected<void> retype_hook(session::Execution& execution);
// Once the login held by `execution` ends, types the hook (see above).
// Returns at once.
void type_hook_after_login(boost::asio::io_context& io,
                           std::shared_ptr<session::Execution> execution);

}  // namespace agentty::mcp::tools
