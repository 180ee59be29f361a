// What a write's answer says about the reply it got (write.cpp): notes for
// the cases where the output alone would mislead the agent (an ignored
// ctrl-c, a program not reading, input left queued).
#pragma once

#include <cstdint>
#include <string>

#include "mcp/tool.hpp"
#include "mcp/tools/common.hpp"
#include "mcp/tools/write_reply.hpp"
#include "session/execution.hpp"

namespace agentty::mcp::tools {

void note_interrupt_ignored(json& result, session::Execution& execution, const std::string& bytes,
                            std::uint64_t seq_before);
void note_interrupt_unanswered(json& result, session::Execution& execution,
                               const std::string& bytes, std::uint64_t seq_before);
void note_not_reading(json& result, session::Execution& execution, const TypedInput& typed,
                      std::uint64_t seq_before, WaitEnd end);
void note_line_unanswered(json& result, session::Execution& execution, const std::string& bytes,
                          std::uint64_t seq_before);
void note_pending_input(json& result, session::Execution& execution);
// Whether the terminal itself collects the lines typed now (canonical mode:
// a shell's `read`, `cat`, input() without readline), as known.
bool terminal_collects_lines(const session::Execution& execution);
// `typed` went to a terminal that collected its lines (terminal_collects_lines
// before it was typed): a line longer than the terminal keeps is noted.
void note_line_cut(json& result, bool collected, std::string_view typed);

}  // namespace agentty::mcp::tools
