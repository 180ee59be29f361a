// ShellHook: the prompt hooks agentty installs in an interactive shell so that
// it announces command boundaries with invisible OSC 133 marks:
//   ESC ] 133 ; A ; n=NONCE BEL          prompt starts
//   ESC ] 133 ; B ; n=NONCE BEL          prompt ends (the shell reads a line)
//   ESC ] 133 ; C ; n=NONCE BEL          the command's output starts
//   ESC ] 133 ; D ; STATUS ; p=PID ; w=DIR ; n=NONCE BEL
//                                        the command ended with STATUS, in the
//                                        shell PID, now in DIR (percent-encoded;
//                                        bash and zsh; sh: no w, and k=sh)
//                                        (e=vi before n: its line editor is
//                                        in vi mode; bash and zsh)
//   ESC ] 133 ; E ; TEXT ; n=NONCE BEL   the command line (zsh only; TEXT is
//                                        percent-encoded: %, ;, and C0 bytes)
//   ESC ] 133 ; S ; n=NONCE BEL          zsh: the PROMPT_SP filler printed
//                                        after the D mark ends here
// The nonce is a per-session random string kept in an unexported shell
// variable, so output that merely looks like a mark is not taken as one.
//
// bash: `bash --rcfile FILE`; FILE sources /etc/bash.bashrc and ~/.bashrc (as
//   an interactive non-login bash would), then wraps PROMPT_COMMAND (string or
//   array) so agentty's precmd runs first (it sees the command's $?) and its
//   postcmd last (it re-adds the marks to PS1/PS0 even when the user's
//   PROMPT_COMMAND rebuilt them). The C mark comes from PS0, which bash prints
//   only when a command line was read (not for an empty line).
// zsh: ZDOTDIR points at a generated dir whose .zshenv/.zshrc source the
//   user's from $HOME, then add precmd/preexec hooks.
// sh (dash): no hooks exist; PS1 carries D and A/B marks (dash expands $? in
//   PS1) and PS2 is empty; the output start is found after the echo of the
//   typed line, so boundaries are heuristic for commands not typed by agentty.
//
// Pure functions returning text; nothing here touches the file system except
// write_shell_startup.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "base/owned_path.hpp"

namespace agentty::session {

enum class ShellKind { bash, zsh, sh };

std::optional<ShellKind> parse_shell_kind(std::string_view name);
std::string to_string(ShellKind kind);

// The prompt hooks for bash and zsh as one line that either shell reads (each
// runs its own part), written to their rc files and typed into a shell of
// unknown kind (an SSH login shell, `write(action="rearm")`); other shells
// (sh, fish) answer with a syntax error. Idempotent: running it twice does not
// wrap PROMPT_COMMAND twice. It leaves ${#__atk} = the lines the
// expanded prompt has above its last one, so what follows it when typed can
// erase a multi-line prompt whole (see kPromptLinesMark).
std::string hook_line(std::string_view nonce);
// What a local zsh session's rc file runs after the user's .zshrc: the hook
// line, after what keeps PROMPT_SP's filler on the screen without it
// ending commands' output (not typed: see shell_hook.cpp).
std::string zsh_rc_hook(std::string_view nonce);
// The mark a typed hook line prints with that count (OSC 133;L;COUNT;n=NONCE):
// the prompt's earlier lines are hidden from the agent's text with it.
inline constexpr char kPromptLinesMark = 'L';
// Ends zsh's PROMPT_SP filler, which the hook prints after the D mark.
inline constexpr char kPromptSpMark = 'S';
// The hook's variable whose length is that count.
inline constexpr std::string_view kPromptLinesVar = "__atk";

// For rearm when the foreground shell is sh (dash): the line that gives its
// PS1 the marks unless it still has them; the session's own sh after its PS1
// was reset, or an sh started in (or exec'ed by) a bash or zsh session.
// (bash and zsh read hook_line; dash refuses it as a syntax error.)
std::string sh_rearm_line(std::string_view nonce);
// Typed into a host's login shell when hook_line(nonce) was put in
// `hook_file` on that host: the shell that reads it picks its own marks
// (bash and zsh source the file, sh gets sh_rearm_line), which no choice
// made from outside can (an sh account whose .profile runs `exec zsh`), and
// the file is removed. ~330 bytes against the hook line's ~1.6 KB of echo.
std::string hook_dispatch_line(std::string_view hook_file, std::string_view nonce);

// What to run and which variables to set for a shell whose startup files were
// written under `dir`; `files` removes them once nobody holds it.
struct ShellLaunch {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::shared_ptr<OwnedPath> files;
};

// Writes the generated startup files for `kind` into `dir` (created) and
// returns how to start that shell. `program` is the resolved shell path;
// `user_env` the variables open adds, whose ZDOTDIR (zsh) or ENV (sh) name
// the user's startup files ahead of the server's own.
Expected<ShellLaunch> write_shell_startup(ShellKind kind, const std::string& program,
                                          std::string_view nonce, const std::filesystem::path& dir,
                                          const std::map<std::string, std::string>& user_env = {});

}  // namespace agentty::session
