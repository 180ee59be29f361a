#include "session/shell_integration.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "session/execution.hpp"
#include "session/text_view.hpp"

namespace agentty::session {

namespace {

constexpr std::string_view kPrefix = "\x1b]133;";

std::vector<std::string> split_fields(std::string_view body) {
  std::vector<std::string> fields;
  std::size_t from = 0;
  while (true) {
    auto at = body.find(';', from);
    fields.emplace_back(
        body.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos) break;
    from = at + 1;
  }
  return fields;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A status field: digits only (with promptvars off, bash leaves `$?` as is).
std::optional<int> parse_status(std::string_view text) {
  if (text.empty() || text.size() > 3 ||
      text.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  return std::atoi(std::string(text).c_str());
}

std::string percent_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 &&
        hex_value(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// The command line a human typed, from the bytes the shell echoed between
// the end of its prompt and the C mark (line editing is replayed by to_text).
std::string typed_line(std::string_view echo) {
  std::string text = to_text(echo);
  std::string out;
  std::size_t from = 0;
  while (from < text.size()) {
    auto at = text.find('\n', from);
    std::string line = text.substr(from, at == std::string::npos ? std::string::npos : at - from);
    from = at == std::string::npos ? text.size() : at + 1;
    auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    auto last = line.find_last_not_of(" \t");
    if (!out.empty()) out += '\n';
    out += line.substr(first, last - first + 1);
  }
  return out;
}

}  // namespace

// --- ShellMarkParser ---------------------------------------------------------

ShellMarkParser::ShellMarkParser(std::string nonce) : nonce_("n=" + std::move(nonce)) {}

void ShellMarkParser::feed(std::string_view bytes, std::uint64_t start_seq,
                           std::vector<ShellMark>& out) {
  const char before = last_byte_;
  if (!bytes.empty()) last_byte_ = bytes.back();
  std::size_t i = 0;
  while (i < bytes.size()) {
    if (pending_.empty()) {
      const void* esc = std::memchr(bytes.data() + i, 0x1b, bytes.size() - i);
      if (!esc) return;
      i = static_cast<const char*>(esc) - bytes.data();
      pending_.push_back('\x1b');
      pending_begin_ = start_seq + i;
      pending_printed_ = (i > 0 ? bytes[i - 1] : before) == '\x01';
      ++i;
      continue;
    }
    char c = bytes[i];
    if (pending_.size() < kPrefix.size()) {
      if (c == kPrefix[pending_.size()]) {
        pending_.push_back(c);
        ++i;
      } else {
        pending_.clear();  // not a mark; look at this byte again
      }
      continue;
    }
    if (pending_.back() == '\x1b') {  // ESC inside the string: ST or the end of it
      pending_.pop_back();
      if (c == '\\') {
        ++i;
        finish_mark(start_seq + i, out);
      } else {
        pending_.clear();
      }
      continue;
    }
    if (c == '\a') {
      ++i;
      finish_mark(start_seq + i, out);
      continue;
    }
    if (c == 0x18 || c == 0x1a || pending_.size() >= kMaxMarkBytes) {
      pending_.clear();  // CAN/SUB abort a control string; an overlong one is not ours
      ++i;
      continue;
    }
    pending_.push_back(c);
    ++i;
  }
}

void ShellMarkParser::finish_mark(std::uint64_t end_seq, std::vector<ShellMark>& out) {
  std::string_view body(pending_);
  body.remove_prefix(kPrefix.size());
  auto fields = split_fields(body);
  pending_.clear();
  if (fields.size() < 2 || fields.front().size() != 1 || fields.back() != nonce_) return;
  ShellMark mark;
  mark.kind = fields.front()[0];
  mark.fields.assign(fields.begin() + 1, fields.end() - 1);
  mark.begin_seq = pending_begin_;
  mark.printed = pending_printed_;
  mark.end_seq = end_seq;
  out.push_back(std::move(mark));
}

// --- ShellIntegration --------------------------------------------------------

ShellIntegration::ShellIntegration(ShellKind kind, std::string nonce)
    : kind_(kind), nonce_(nonce), parser_(std::move(nonce)) {}

void ShellIntegration::on_output(std::string_view bytes, std::uint64_t start_seq) {
  if (sh_marks()) sh_track_echo(bytes, start_seq);
  marks_.clear();
  parser_.feed(bytes, start_seq, marks_);
  std::uint64_t pos = start_seq;
  auto keep_echo = [&](std::uint64_t to) {
    if (!prompt_ready_ || to <= pos || echo_.size() >= kMaxEchoBytes) return;
    echo_.append(bytes.substr(pos - start_seq, to - pos));
  };
  for (const auto& mark : marks_) {
    keep_echo(std::max(mark.begin_seq, pos));
    apply(mark);
    pos = std::max(pos, mark.end_seq);
  }
  keep_echo(start_seq + bytes.size());
}

void ShellIntegration::on_input(std::string_view bytes, InputSource source) {
  if (source == InputSource::human) human_typed_ = true;
  if (prompt_ready() && bytes.find_first_of("\r\n") != std::string_view::npos) line_entered_ = true;
}

void ShellIntegration::hide_typed_hook(std::vector<std::uint64_t> line_starts) {
  if (line_starts.empty()) return;
  if (hidden_hooks_.size() == kMaxHiddenHooks) hidden_hooks_.erase(hidden_hooks_.begin());
  const auto line_seq = line_starts.front();
  hidden_hooks_.push_back({line_seq, 0, std::move(line_starts)});
}

void ShellIntegration::close_hidden_hook(const ShellMark& mark) {
  if (hidden_hooks_.empty() || hidden_hooks_.back().end_seq != 0) return;
  auto& hook = hidden_hooks_.back();
  if (mark.kind == kPromptLinesMark && !mark.fields.empty()) {
    // The prompt's earlier lines: the shell draws them again with its next prompt.
    std::size_t above = 0;
    for (char c : mark.fields.front()) {
      if (c < '0' || c > '9' || above > hook.line_starts.size()) break;
      above = above * 10 + static_cast<std::size_t>(c - '0');
    }
    hook.line_seq = hook.line_starts[std::min(above, hook.line_starts.size() - 1)];
  }
  hook.end_seq = std::max(mark.begin_seq, hook.line_seq);
  hook.line_starts = {};
}

void ShellIntegration::on_exit() {
  exited_ = true;
  prompt_ready_ = false;
  line_entered_ = false;
}

void ShellIntegration::apply(const ShellMark& mark) {
  if (mark.printed) return;  // a command's output, not the shell's prompt
  ++marks_seen_;
  close_hidden_hook(mark);
  switch (mark.kind) {
    case 'B':
      on_prompt_drawn(mark);
      break;
    case 'C':
      on_command_start(mark.begin_seq, mark.end_seq);
      break;
    case 'D':
      on_command_end(mark);
      break;
    case 'E':
      if (!mark.fields.empty()) e_text_ = percent_decode(mark.fields[0]);
      break;
    case 'A':
      on_prompt_start(mark);
      break;
    case kPromptSpMark:
      on_prompt_sp_end(mark);
      break;
    default:
      break;
  }
}

void ShellIntegration::on_prompt_drawn(const ShellMark& mark) {
  // A prompt with no D before it, inside a running command: a nested shell
  // that inherited the marked prompt (an exported PS1: a venv's activate
  // exports it), not the hook. Its lines print no C mark and no D, so it is
  // not a marked prompt: the command that started the shell still runs and
  // lines are typed into it as into any nested shell, heuristically, until
  // write(action="rearm") gives it the hook (its D marks then name it). Taken
  // as a prompt, the agent's next line waited for a C mark forever and every
  // later one was refused.
  if (running()) return;
  if (!commands_.empty() && commands_.back().ended() && commands_.back().prompt_end == 0) {
    auto& command = commands_.back();
    command.prompt_end = mark.end_seq;
    command.after_end =
        last_prompt_begin_ >= command.after_begin ? last_prompt_begin_ : mark.begin_seq;
  }
  prompt_ready_ = true;
  line_entered_ = false;
  last_prompt_end_ = mark.end_seq;
  echo_.clear();
}

void ShellIntegration::on_command_start(std::uint64_t c_mark_seq, std::uint64_t output_begin) {
  if (running()) return;  // bash prints PS0 before each command of a multi-command line
  ShellCommand* command = pending_agent_ ? find_mutable(*pending_agent_) : nullptr;
  pending_agent_.reset();
  if (!command) {
    ShellCommand fresh;
    fresh.id = next_id_++;
    fresh.by_human = human_typed_;
    fresh.prompt_begin = last_prompt_begin_;
    fresh.text = e_text_ ? *e_text_ : typed_line(echo_);
    commands_.push_back(std::move(fresh));
    command = &commands_.back();
  }
  command->c_mark_seq = c_mark_seq;
  command->output_begin = output_begin;
  command->zsh = e_text_.has_value();
  running() = command->id;
  prompt_ready_ = false;
  line_entered_ = false;
  human_typed_ = false;
  e_text_.reset();
  echo_.clear();
  while (commands_.size() > kMaxCommands) commands_.pop_front();
}

// The prompt starts. Normally a D mark came first; if the shell on top
// runs a command and this prompt is its own (p=), its precmd no longer runs
// (the user assigned PROMPT_COMMAND or emptied precmd_functions): the
// command ended, with the status the prompt carries (s=). A prompt redrawn
// before a pasted command starts, or another shell's, ends nothing.
void ShellIntegration::on_prompt_start(const ShellMark& mark) {
  last_prompt_begin_ = mark.begin_seq;
  if (!running() || !shells_.back().key) return;
  std::optional<int> status;
  std::optional<std::string> key;
  for (const auto& field : mark.fields) {
    if (field.starts_with("s=")) status = parse_status(field.substr(2));
    if (field.starts_with("p=")) key = field.substr(2);
  }
  if (!status || key != shells_.back().key) return;
  end_commands(shells_.size() - 1, *status, mark.begin_seq, mark.begin_seq);
}

// Which shell of the stack printed a D mark, adding it when it is new.
std::size_t ShellIntegration::shell_of(const ShellMark& mark) {
  std::string key;
  bool ps1_marks = false;
  bool vi_editor = false;
  for (const auto& field : mark.fields) {
    if (field.starts_with("p=")) key = field.substr(2);
    if (field == "e=vi") vi_editor = true;
    if (field.starts_with("w=")) shell_cwd_ = percent_decode(std::string_view(field).substr(2));
    if (field == "k=sh") ps1_marks = true;
  }
  auto same = std::find_if(shells_.rbegin(), shells_.rend(),
                           [&](const ShellLevel& shell) { return shell.key == key; });
  if (same == shells_.rend()) {
    if (!shells_.back().key) {  // the shell on top had not printed a D yet: this is it
      shells_.back().key = key;
    } else {  // a new shell inside the foreground one (its running command started it)
      shells_.push_back(ShellLevel{key, std::nullopt});
    }
    same = shells_.rbegin();
  }
  // Asked each time: the same pid may run another shell since (exec zsh, exec sh).
  same->ps1_marks = ps1_marks;
  same->vi_editor = vi_editor;
  return static_cast<std::size_t>(shells_.rend() - same) - 1;
}

void ShellIntegration::on_command_end(const ShellMark& mark) {
  last_end_mark_ = mark.end_seq;
  last_end_mark_begin_ = mark.begin_seq;
  int status = mark.fields.empty() ? -1 : std::atoi(mark.fields[0].c_str());
  last_end_status_ = status;
  std::size_t level = shell_of(mark);
  end_commands(level, status, mark.begin_seq, mark.end_seq);
}

// zsh's PROMPT_SP filler, printed by the hook right after the D mark, is
// neither the command's output nor what the shell printed after it. Every
// command that D ended (with nested shells, several) starts its "after" past it.
void ShellIntegration::on_prompt_sp_end(const ShellMark& mark) {
  for (auto& command : commands_) {
    if (command.ended() && command.after_begin == last_end_mark_)
      command.after_begin = mark.end_seq;
  }
}

// Shells above `level` have exited: what ran in them, and the command in
// `level` that started them, ends at output_end. Nothing running (an empty
// line, ctrl-c at the prompt) ends nothing.
void ShellIntegration::end_commands(std::size_t level, int status, std::uint64_t output_end,
                                    std::uint64_t after_begin) {
  while (shells_.size() > level) {
    if (auto id = shells_.back().command) {
      if (ShellCommand* command = find_mutable(*id)) {
        command->exit_code = status;
        command->output_end = output_end;
        command->after_begin = after_begin;
      }
    }
    if (shells_.size() == level + 1) break;
    shells_.pop_back();
  }
  shells_.back().command.reset();
}

void ShellIntegration::sh_track_echo(std::string_view bytes, std::uint64_t start_seq) {
  if (!pending_agent_ || sh_echo_lines_left_ == 0) return;
  const ShellCommand* command = find(*pending_agent_);
  if (!command) return;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] != '\n' || start_seq + i < command->submitted_seq) continue;
    if (--sh_echo_lines_left_ == 0) {
      on_command_start(start_seq + i + 1, start_seq + i + 1);
      return;
    }
  }
}

std::uint64_t ShellIntegration::submit_agent_command(std::string text, std::uint64_t seq,
                                                     bool heuristic) {
  ShellCommand command;
  command.id = next_id_++;
  command.by_agent = true;
  command.heuristic = heuristic;
  command.submitted_seq = seq;
  if (sh_marks()) {
    sh_echo_lines_left_ = 1 + static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  }
  command.text = std::move(text);
  if (!heuristic) pending_agent_ = command.id;
  commands_.push_back(std::move(command));
  return commands_.back().id;
}

void ShellIntegration::abandon_pending(std::uint64_t id) {
  if (pending_agent_ == id) pending_agent_.reset();
}

std::string_view ShellIntegration::clear_line_keys() const {
  const auto& top = shells_.back();
  return top.key && top.vi_editor && !top.command ? "\x1bS" : "\x15";
}

bool ShellIntegration::sh_marks() const {
  const auto& top = shells_.back();
  if (top.key) return top.ps1_marks;
  return shells_.size() == 1 && kind_ == ShellKind::sh;
}

ShellCommand* ShellIntegration::find_mutable(std::uint64_t id) {
  for (auto it = commands_.rbegin(); it != commands_.rend(); ++it) {
    if (it->id == id) return &*it;
  }
  return nullptr;
}

const ShellCommand* ShellIntegration::find(std::uint64_t id) const {
  return const_cast<ShellIntegration*>(this)->find_mutable(id);
}

const ShellCommand* ShellIntegration::current() const {
  if (running()) return find(*running());
  // A line typed into a REPL is no command of the shell's: after the REPL
  // ends, the newest command is the REPL (its exit code), not that line.
  for (auto it = commands_.rbegin(); it != commands_.rend(); ++it)
    if (!it->heuristic) return &*it;
  return nullptr;
}

std::string ShellIntegration::agent_text(std::string_view bytes, std::uint64_t start_seq,
                                         Charsets charsets, const TerminalSizes& sizes,
                                         const TextStart& start) const {
  std::uint64_t end_seq = start_seq + bytes.size();
  // At `seq`, `note` replaces the bytes up to `resume`.
  struct Edit {
    std::uint64_t seq;
    std::uint64_t resume;
    std::string note;
    bool end_line = false;  // end the line here unless it is ended
  };
  std::vector<Edit> edits;
  for (const auto& command : commands_) {
    // zsh's prompt starts with a CR: output without a final newline
    // ("printf done") would be overwritten by it, where a terminal shows
    // it on its line (PROMPT_SP's filler moved the prompt to the next one).
    // The filler itself (up to after_begin) is no text.
    if (command.zsh && command.ended() && command.output_end >= start_seq &&
        command.output_end < end_seq) {
      edits.push_back({command.output_end,
                       std::clamp(command.after_begin, command.output_end, end_seq), "", true});
    }
    if (!command.by_human) continue;
    if (command.c_mark_seq >= start_seq && command.c_mark_seq < end_seq) {
      // The prompt and the echoed typing say the same as the note, less clearly.
      std::uint64_t from = command.prompt_begin > 0 && command.prompt_begin < command.c_mark_seq
                               ? std::max(command.prompt_begin, start_seq)
                               : command.c_mark_seq;
      edits.push_back({from, command.c_mark_seq, "[human] $ " + command.text + "\n"});
    }
    if (command.ended() && command.output_end >= start_seq && command.output_end < end_seq) {
      edits.push_back({command.output_end, command.output_end,
                       "[exit " + std::to_string(*command.exit_code) + "]\n"});
    }
  }
  for (const auto& hook : hidden_hooks_) {
    if (hook.end_seq > start_seq && hook.line_seq < end_seq)
      edits.push_back({std::max(hook.line_seq, start_seq), std::min(hook.end_seq, end_seq), ""});
  }
  if (edits.empty()) return to_text(bytes, charsets, sizes, start);
  std::stable_sort(edits.begin(), edits.end(),
                   [](const Edit& a, const Edit& b) { return a.seq < b.seq; });
  std::string out;
  std::uint64_t pos = start_seq;
  std::uint64_t charsets_seq = start_seq;  // where `charsets` are in use
  // The text from `pos`, in the character sets the bytes before it select.
  auto text_from = [&](std::uint64_t end) {
    advance_charsets(bytes.substr(charsets_seq - start_seq, pos - charsets_seq), charsets, false);
    charsets_seq = pos;
    return to_text(bytes.substr(pos - start_seq, end - pos), charsets,
                   sizes_within(sizes, pos - start_seq, end - start_seq),
                   pos == start_seq ? start : TextStart{});
  };
  for (const auto& edit : edits) {
    if (edit.seq > pos) out += text_from(edit.seq);
    if ((edit.end_line || !edit.note.empty()) && !out.empty() && out.back() != '\n') out += '\n';
    out += edit.note;
    pos = std::max(pos, edit.resume);
  }
  out += text_from(end_seq);
  return out;
}

std::optional<int> ShellIntegration::session_shell_pid() const {
  const auto& key = shells_.front().key;
  if (!key || key->empty()) return std::nullopt;
  int pid = 0;
  auto [end, error] = std::from_chars(key->data(), key->data() + key->size(), pid);
  if (error != std::errc() || end != key->data() + key->size() || pid <= 0) return std::nullopt;
  return pid;
}

}  // namespace agentty::session
