// AttachClient: `agentty attach <execution_id|terminal_url>`, a real terminal
// as one more viewer of an execution, over the same WebSocket protocol as the
// browser page.
//
// Read-only at first. Keys after the prefix Ctrl-]:
//   t  take over / release     d  detach     Ctrl-]  send a literal Ctrl-]
// While held, every other key goes to the program, and the program's
// terminal follows this terminal's size (SIGWINCH). Detaching releases.
// The server's port and secret come from the terminal_url (it carries both),
// or from an execution_id plus a dashboard/terminal URL (--url or
// AGENTTY_WEB_URL); AGENTTY_WEB_TOKEN supplies a secret the URL lacks.
//
// Runs its own single-threaded io_context; the terminal is put in raw mode and
// restored on every way out.
#pragma once

#include <cstdint>
#include <string>

#include "base/expected.hpp"

namespace agentty::web {

struct AttachOptions {
  std::string target;  // execution id, or a terminal URL http://HOST:PORT/t/ID#token=SECRET
  std::string url;     // server URL when target is an id (--url, AGENTTY_WEB_URL)
  std::string token;   // secret when the URL has no #token= (AGENTTY_WEB_TOKEN)
};

struct AttachTarget {
  std::string host;  // as written in the URL ("127.0.0.1", "localhost", "::1")
  std::uint16_t port = 0;
  std::string execution_id;
  std::string token;
};

inline constexpr unsigned char kAttachPrefixKey = 0x1d;  // Ctrl-]

Expected<AttachTarget> resolve_attach_target(const AttachOptions& options);

// Runs until detach, the end of the execution, or a lost connection.
// Returns the process exit status (0 on detach or a normal end).
int run_attach(const AttachOptions& options);

}  // namespace agentty::web
