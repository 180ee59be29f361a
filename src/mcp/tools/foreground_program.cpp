#include "mcp/tools/foreground_program.hpp"

#include <algorithm>

#include "base/utf8.hpp"

namespace agentty::mcp::tools {

namespace {

// Programs that read single keys, also where they draw no full screen: git's
// pager is `less` with LESS=FRX (no alt screen), and a command line typed
// into it ran as less commands ("g", "i", "t": "No next tag"; "s" saved the
// page to a file named by the rest of the line). "pager" and "editor" are
// Debian's alternatives (/usr/bin/pager, /usr/bin/editor), which git there
// runs by default.
constexpr std::string_view kPagers[] = {"less", "more", "most", "pg", "pager"};
constexpr std::string_view kEditors[] = {"vi",   "vim",   "vim.tiny", "vim.basic", "nvim",
                                         "nano", "emacs", "mg",       "editor"};

}  // namespace

bool is_pager(std::string_view program) {
  return std::find(std::begin(kPagers), std::end(kPagers), program) != std::end(kPagers);
}

std::optional<std::string> key_reader(const session::Execution& execution) {
  auto program = execution.reading_program();
  if (!program) return std::nullopt;
  if (is_pager(*program) ||
      std::find(std::begin(kEditors), std::end(kEditors), *program) != std::end(kEditors))
    return program;
  return std::nullopt;
}

std::string pager_note(const session::Execution& execution) {
  const auto reader = key_reader(execution);
  if (!reader || !is_pager(*reader)) return "";
  return "It is a pager (" + *reader + "): it reads keys, not lines; write input \"q\" quits it.";
}

std::string editor_note(const session::Execution& execution) {
  const auto reader = key_reader(execution);
  if (!reader || is_pager(*reader)) return "";
  std::string leave;
  if (*reader == "nano") {
    leave = "keys [\"ctrl-x\"] leaves it (it then asks whether to save: input \"n\" discards)";
  } else if (*reader == "emacs" || *reader == "mg") {
    leave = "keys [\"ctrl-x\"] then [\"ctrl-c\"] leave it";
  } else {
    leave =
        "keys [\"esc\"], then input \":wq\" with newline=true saves and leaves it (\":q!\" "
        "leaves without saving)";
  }
  return "It is an editor (" + *reader + "): it reads keys, not lines; " + leave +
         ". For git, -m \"message\" (or GIT_EDITOR=true) avoids it.";
}

std::string key_reader_note(const session::Execution& execution) {
  std::string note = pager_note(execution);
  return note.empty() ? editor_note(execution) : note;
}

bool may_be_nested_shell(const std::optional<std::string>& program) {
  static constexpr std::string_view kShellLike[] = {
      "sh",     "bash",    "dash",    "zsh",    "ksh",        "mksh",      "fish",   "tcsh",
      "csh",    "su",      "sudo",    "doas",   "ssh",        "login",     "script", "docker",
      "podman", "kubectl", "nsenter", "chroot", "machinectl", "distrobox", "toolbox"};
  if (!program) return true;
  return std::find(std::begin(kShellLike), std::end(kShellLike), *program) != std::end(kShellLike);
}

bool reads_paste_as_one_line(const std::optional<std::string>& program) {
  return program == "gdb" || program == "gdb-multiarch";
}

bool is_python(const std::optional<std::string>& program) {
  return program && (program->starts_with("python") || program->starts_with("ipython"));
}

bool at_python_prompt(session::Execution& execution) {
  if (!is_python(execution.foreground_program())) return false;
  const auto snapshot = execution.screen().snapshot();
  const auto row = snapshot.cursor.row;
  if (row < 0 || row >= static_cast<int>(snapshot.lines.size())) return false;
  const std::string& line = snapshot.lines[row];  // trailing blanks trimmed
  return line == ">>>" || line == "..." || (line.starts_with("In [") && line.ends_with("]:")) ||
         line.ends_with("...:");
}

std::string cursor_row_note(session::Execution& execution) {
  constexpr std::size_t kShown = 160;
  const auto snapshot = execution.screen().snapshot();
  const auto row = static_cast<std::size_t>(std::max(snapshot.cursor.row, 0));
  if (snapshot.modes.alt_screen || row >= snapshot.lines.size() || snapshot.lines[row].empty())
    return "";
  const auto below = std::find_if(snapshot.lines.begin() + static_cast<std::ptrdiff_t>(row) + 1,
                                  snapshot.lines.end(), [](const auto& l) { return !l.empty(); });
  if (below == snapshot.lines.end()) return "";
  std::string line = snapshot.lines[row];
  if (line.size() > kShown) line = "..." + line.substr(utf8_char_start(line, line.size() - kShown));
  return "The cursor waits on the row \"" + line + "\" (row " + std::to_string(row + 1) + " of " +
         std::to_string(snapshot.rows) +
         "); the rows drawn under it end the output, so its last line is not the question.";
}

bool cursor_after_text(session::Execution& execution) {
  const auto snapshot = execution.screen().snapshot();
  const auto row = snapshot.cursor.row;
  if (row < 0 || row >= static_cast<int>(snapshot.lines.size()) || snapshot.cursor.col <= 0)
    return false;
  const std::string& line = snapshot.lines[static_cast<std::size_t>(row)];
  return line.find_first_not_of(' ') != std::string::npos;
}

bool is_plain_sh(const std::optional<std::string>& program) {
  return program == "sh" || program == "dash" || program == "ash";
}

}  // namespace agentty::mcp::tools
