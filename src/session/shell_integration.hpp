// ShellIntegration: exact command boundaries in an interactive shell session,
// from the OSC 133 marks the prompt hook (shell_hook.hpp) prints.
//
// ShellMarkParser scans the raw PTY byte stream (not libvterm, which truncates
// OSC strings split across reads) for `ESC ] 133 ; ... (BEL | ESC \)` whose
// last field is this session's nonce; a mark split across chunks is found
// once its end arrives. Each mark carries the log positions of its first byte
// and of the byte after it.
//
// ShellIntegration turns marks into ShellCommand records:
//   B (prompt drawn)  -> the shell reads a line: prompt_ready.
//   C (output starts) -> a command runs; its output starts after the mark.
//   D;status          -> the running command ended; output ends at the mark.
//   A;s=status;p=PID  -> a prompt starts; if no D came (a user's PROMPT_COMMAND
//                        replaced the hook's), it ends the command as D would.
// A D with no running command (empty line, ctrl-c at the prompt) is ignored.
// A command is the agent's when execute(session=) submitted it; otherwise it
// is a human's when a human typed since the previous prompt (its text is the
// zsh E mark or, for bash, the echoed line between the B and C marks).
// Commands typed by a human show up in the agent's text view as
// `[human] $ CMD` in place of the prompt and the echoed typing, and
// `[exit N]` after the output: agent_text() edits only that view, at the
// marks' log positions, so browser viewers, the raw format and the spool
// file see the bytes unchanged.
// Nested shells: every hook's D mark names the shell that printed it
// (`p=PID`, the shell's $$), so the shells form a stack: the session's own at
// the bottom, the foreground one on top. A D from a shell not on the stack is
// a new nested shell (rearmed, or one that inherited the hook): the command
// that started it (bash, su, ssh) stays suspended below it. A D from a shell
// lower in the stack means every shell above it has exited: the commands
// running in them and the one that started them all end at that D, with its
// status (the inner shell's exit status, passed on by bash/su/ssh). So an
// empty line in the inner shell never ends the outer command, a failed rearm
// never hides its end, and `exit` in the inner shell ends both.
//
// Threading: the execution's event loop only, like Execution.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "session/charsets.hpp"
#include "session/shell_hook.hpp"
#include "session/text_view.hpp"

namespace agentty::session {

enum class InputSource;

struct ShellMark {
  char kind = 0;                    // 'A', 'B', 'C', 'D', 'E'
  std::vector<std::string> fields;  // between the kind and the nonce (D: status, p=PID; E: text)
  std::uint64_t begin_seq = 0;      // first byte of the mark
  std::uint64_t end_seq = 0;        // byte after the mark
  // Right after SOH (readline's \[): a prompt string printed by a command
  // (echo "${PS1@P}"), not drawn by the shell, which drops \[ and \].
  bool printed = false;
};

class ShellMarkParser {
 public:
  explicit ShellMarkParser(std::string nonce);
  // Appends every mark completed by `bytes` (log positions start at start_seq).
  void feed(std::string_view bytes, std::uint64_t start_seq, std::vector<ShellMark>& out);

 private:
  static constexpr std::size_t kMaxMarkBytes = 64 * 1024;
  void finish_mark(std::uint64_t end_seq, std::vector<ShellMark>& out);

  std::string nonce_;
  std::string pending_;  // a possible mark so far (starts with ESC)
  std::uint64_t pending_begin_ = 0;
  bool pending_printed_ = false;
  char last_byte_ = 0;  // of the previous feed
};

struct ShellCommand {
  std::uint64_t id = 0;
  bool by_agent = false;
  bool by_human = false;   // a human typed since the previous prompt
  bool heuristic = false;  // submitted while marks were absent
  std::string text;
  std::uint64_t submitted_seq = 0;  // log position when the agent typed it
  std::uint64_t c_mark_seq = 0;     // 0: output has not started
  std::uint64_t output_begin = 0;
  std::uint64_t output_end = 0;  // 0: still running
  std::uint64_t prompt_end = 0;  // after the next prompt (0: not drawn yet)
  // What the shell printed between the D mark and the next prompt (a user's
  // PROMPT_COMMAND or precmd, like direnv's; bash's job notices; a
  // background job's output): a person sees it after the command's output.
  std::uint64_t after_begin = 0;  // the byte after the D mark
  std::uint64_t after_end = 0;    // where the next prompt starts (0: not drawn yet)
  // A human's: where the prompt it was typed at starts (its A mark), so the
  // agent's text can show `[human] $ CMD` in place of the prompt and the echo.
  std::uint64_t prompt_begin = 0;
  // zsh's preexec announced it (E mark): zsh returns to the line's start
  // before its next prompt (PROMPT_CR). The hook prints zsh's PROMPT_SP
  // filler after the D mark (then after_begin is past it, at the S mark),
  // or nothing when the user turned PROMPT_SP off: then output left
  // without a final newline is overwritten on the screen, as in a terminal.
  bool zsh = false;
  std::optional<int> exit_code;
  bool ended() const { return exit_code.has_value(); }
};

class ShellIntegration {
 public:
  ShellIntegration(ShellKind kind, std::string nonce);

  // From Execution.
  void on_output(std::string_view bytes, std::uint64_t start_seq);
  void on_input(std::string_view bytes, InputSource source);
  void on_exit();

  ShellKind kind() const { return kind_; }
  // The foreground shell's marks come from its PS1 alone (sh, dash): no C
  // mark, so a command's output starts after the echo of its typed line and
  // boundaries are heuristic. Told by its newest D mark (sh's say k=), so
  // it follows the shell: an sh session after `exec
  // zsh` and rearm is exact; a dash started in (or exec'ed by) a bash or
  // zsh session and rearmed is heuristic. Before any D: the session's kind.
  bool sh_marks() const;
  // The keys that erase the line at the foreground shell's prompt before
  // the agent types one: ctrl-u, or, when its newest D mark said its line
  // editor is in vi mode, ESC then S (vi's change-whole-line; readline and
  // zle both take a key that follows ESC as a command, not as meta-S): in
  // vi's command mode ctrl-u does not enter insert mode, and the typed line
  // would be read as vi commands. Not for a nested shell that has printed
  // no D yet (its mode is unknown): ctrl-u.
  std::string_view clear_line_keys() const;
  const std::string& nonce() const { return nonce_; }
  bool prompt_ready() const { return prompt_ready_ && !running(); }
  // The working directory the newest D mark reported: that of the innermost
  // marked shell (after `ssh` and rearm, the remote one), as of its last
  // prompt. nullopt before one (or from sh, whose marks carry none).
  const std::optional<std::string>& shell_cwd() const { return shell_cwd_; }
  // Enter was typed at the prompt (write, a person) and the shell has neither
  // started a command nor drawn its prompt since: it is about to start the
  // line, or reads the rest of it (an unclosed quote, a trailing backslash,
  // a here-document) at its continuation prompt. Not ready for a command.
  bool line_entered() const { return line_entered_; }
  bool command_running() const { return running().has_value(); }
  bool exited() const { return exited_; }
  std::uint64_t last_prompt_end() const { return last_prompt_end_; }
  // Where the last D mark (the shell back at its prompt loop) ended. A
  // prompt drawn without one before it is the line editor redrawing (bash
  // redraws a pasted multi-line command before running it), not a new prompt.
  std::uint64_t last_end_mark() const { return last_end_mark_; }
  // That D mark's first byte and its status: after a line that started no
  // command (no C mark), what the shell printed before it (a syntax error)
  // and the status it set.
  std::uint64_t last_end_mark_begin() const { return last_end_mark_begin_; }
  int last_end_status() const { return last_end_status_; }
  std::uint64_t marks_seen() const { return marks_seen_; }
  // The session's own shell's pid (the p= of its D marks, the bottom of the
  // stack), once it has printed one; it leads the terminal's session.
  std::optional<int> session_shell_pid() const;

  // The agent typed `text` at log position `seq`; returns the command's id.
  std::uint64_t submit_agent_command(std::string text, std::uint64_t seq, bool heuristic);
  // A heuristic command is over (quiet output): forget it as pending.
  void abandon_pending(std::uint64_t id);
  // The agent re-injected the hook into the foreground program. Nothing to
  // prepare: the new shell's first D mark names it (and a rearm that reached
  // no shell leaves the running command running).
  void rearming() {}
  // The agent typed the prompt hook into a shell (open on a host, rearm),
  // at a prompt whose line starts at log position `line_starts[0]`
  // (line_starts[k]: the line k rows above): that line, the hook's echo and
  // what the shell printed before its first mark are left out of the agent's
  // text, as the hook erases them from the screen (a person at ssh sees
  // neither). When that first mark is the hook's count of the prompt's
  // earlier lines (kPromptLinesMark), those lines are left out too: the
  // shell draws the whole prompt again. Nothing is left out until the mark
  // arrives: a hook that failed shows why. Each typing is hidden (the newest
  // kMaxHiddenHooks).
  void hide_typed_hook(std::vector<std::uint64_t> line_starts);
  // Shells known to be running one inside the other (1: no nesting).
  std::size_t shell_depth() const { return shells_.size(); }
  const ShellCommand* find(std::uint64_t id) const;
  // The running command, else the newest one the shell ran (a line typed
  // into a program it ran is not one); nullptr before any.
  const ShellCommand* current() const;

  // The text view of `bytes` (log positions from start_seq) with the
  // `[human] $ CMD` / `[exit N]` annotations of human commands inserted;
  // `charsets`: the character sets in use at start_seq; `sizes` and
  // `start`: the terminal's, for the text view's live area.
  std::string agent_text(std::string_view bytes, std::uint64_t start_seq, Charsets charsets = {},
                         const TerminalSizes& sizes = {}, const TextStart& start = {}) const;

 private:
  static constexpr std::size_t kMaxCommands = 4096;
  static constexpr std::size_t kMaxEchoBytes = 64 * 1024;
  // One shell of the stack; `key` is the p= field of its D marks (empty for
  // a hook without one), unknown until its first D.
  struct ShellLevel {
    std::optional<std::string> key;
    std::optional<std::uint64_t> command;  // running; below the top: started the shell above
    // Its newest D mark said k=sh: sh's marks, from PS1 (see sh_marks).
    bool ps1_marks = false;
    bool vi_editor = false;  // its newest D mark said e=vi (see clear_line_keys)
  };
  std::optional<std::uint64_t>& running() { return shells_.back().command; }
  const std::optional<std::uint64_t>& running() const { return shells_.back().command; }
  std::size_t shell_of(const ShellMark& mark);
  void apply(const ShellMark& mark);
  void on_prompt_start(const ShellMark& mark);
  void on_prompt_drawn(const ShellMark& mark);
  void on_command_start(std::uint64_t c_mark_seq, std::uint64_t output_begin);
  void on_command_end(const ShellMark& mark);
  void on_prompt_sp_end(const ShellMark& mark);
  void end_commands(std::size_t level, int status, std::uint64_t output_end,
                    std::uint64_t after_begin);
  void sh_track_echo(std::string_view bytes, std::uint64_t start_seq);
  ShellCommand* find_mutable(std::uint64_t id);

  ShellKind kind_;
  std::string nonce_;
  ShellMarkParser parser_;
  std::vector<ShellMark> marks_;  // scratch
  std::deque<ShellCommand> commands_;
  std::uint64_t next_id_ = 1;
  std::vector<ShellLevel> shells_{ShellLevel{}};  // never empty
  std::optional<std::uint64_t> pending_agent_;
  bool prompt_ready_ = false;
  bool line_entered_ = false;
  bool human_typed_ = false;
  bool exited_ = false;
  std::string echo_;  // bytes since the last prompt (the typed line)
  std::optional<std::string> e_text_;
  std::optional<std::string> shell_cwd_;  // from D marks
  std::uint64_t last_prompt_end_ = 0;
  std::uint64_t last_prompt_begin_ = 0;  // the last A mark
  std::uint64_t last_end_mark_ = 0;
  std::uint64_t last_end_mark_begin_ = 0;
  int last_end_status_ = 0;
  std::uint64_t marks_seen_ = 0;
  std::size_t sh_echo_lines_left_ = 0;  // sh: LFs of the typed line still to come
  struct HiddenHook {
    std::uint64_t line_seq = 0;              // where its prompt's line starts
    std::uint64_t end_seq = 0;               // its first mark (0: not yet)
    std::vector<std::uint64_t> line_starts;  // until then: lines above the prompt's
  };
  void close_hidden_hook(const ShellMark& mark);
  static constexpr std::size_t kMaxHiddenHooks = 64;
  std::vector<HiddenHook> hidden_hooks_;  // hide_typed_hook
};

}  // namespace agentty::session
