// What kind of program holds a session's terminal, by its name: a pager or
// an editor reads keys, not command lines; a shell (or a way into one: su,
// ssh, docker exec) is where write(action="rearm") brings marks back.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "session/execution.hpp"

namespace agentty::mcp::tools {

bool is_pager(std::string_view program);
// The pager or editor reading the terminal now, if that is what reads it.
std::optional<std::string> key_reader(const session::Execution& execution);
// When a pager reads the terminal, what the answer's message says of it
// (how to quit it); else empty.
std::string pager_note(const session::Execution& execution);
// When an editor reads the terminal (git commit, rebase -i), how to leave
// it; else empty.
std::string editor_note(const session::Execution& execution);
// pager_note, else editor_note: how to leave the program that reads keys.
std::string key_reader_note(const session::Execution& execution);
// Whether `program` (unknown: nullopt) may be a shell of its own or lead
// into one.
bool may_be_nested_shell(const std::optional<std::string>& program);
// Whether `program` is a POSIX sh without prompt hooks (dash, ash), whose
// marks can only live in its PS1.
bool is_plain_sh(const std::optional<std::string>& program);

// Whether `program` turns bracketed paste on but reads a pasted block as one
// line (gdb: "print 1\nprint 2" is a syntax error), so that lines are typed
// one by one into it.
bool reads_paste_as_one_line(const std::optional<std::string>& program);

// Whether `program` is Python (python3, python3.11, ipython).
bool is_python(const std::optional<std::string>& program);

// Whether Python's REPL waits at its prompt (`>>> `, `... `, ipython's
// `In [n]: `, `...: `), where a blank line ends a block; not pdb's
// `(Pdb) `, in the same process, where a blank line repeats the last
// command.
bool at_python_prompt(session::Execution& execution);

// When a program waits for input on a row that has text drawn below it (a
// status row that apt, dpkg or a build tool keeps at the bottom), the
// output ends with those rows, not with the question: what the answer's
// message says of the cursor's row; else empty.
std::string cursor_row_note(session::Execution& execution);
// Whether the screen's cursor follows text on its row (a question, a
// prompt), not at a line's start.
bool cursor_after_text(session::Execution& execution);

}  // namespace agentty::mcp::tools
