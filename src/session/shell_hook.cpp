#include "session/shell_hook.hpp"

#include <cerrno>
#include <cstring>

#include "base/private_dir.hpp"

namespace agentty::session {

namespace {

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// The prompt hook, NONCE replaced: one line that bash and zsh both parse
// whole and run their own parts of (ZSH_VERSION is unset in bash), since it
// is also typed into a shell of unknown kind (an SSH login shell, rearm). It
// starts with a space: HISTCONTROL=ignorespace / HIST_IGNORE_SPACE keep it
// out of the history.
// - D marks carry the shell's $$ so nested shells are told apart (see
//   shell_integration.hpp), and its working directory (w=: %, ; and newline
//   percent-encoded; a directory name with ESC or BEL would end the mark). The A mark, expanded in
//   PS1, carries $? (bash restores it after PROMPT_COMMAND; zsh: %?) and $$ too: a user who assigns
//   PROMPT_COMMAND or empties precmd_functions drops precmd, and the prompt
//   still tells which shell came back and with what status.
// - precmd runs first (it sees the command's $?, and hands it on unchanged);
//   postcmd runs last and re-adds the marks to PS1 (and PS0: bash prints the
//   C mark from it; zsh's preexec prints E and C). bash: PROMPT_COMMAND, a
//   string or an array (bash >= 5.1), is wrapped again each time the hook
//   runs (a rearm), its old wrapping taken out first (as `:` in a string,
//   whose entries may be joined by `;`): an entry the user added after it
//   (PROMPT_COMMAND+=, a theme) rebuilds PS1 after postcmd, and rearm
//   must make postcmd last again.
// - Each hook's body, and in bash each call, runs in a group whose stderr is
//   /dev/null: after `set -x` the shell would trace the hook's internals into
//   every answer. The marks go to stdout.
// - zsh: PROMPT_SP would print its filler between the command's output and
//   the D mark (precmd runs after it), so it is turned off. In a local zsh
//   session (its rc file, kZshPromptSp) __atS says the user had it on, and
//   precmd then prints the same filler after the D mark, and an S mark
//   after it that tells agentty where it ends (kept out of the output and
//   the text): output left without a final newline keeps its line on the
//   screen, as in a terminal.
// - D marks say e=vi when the line editor is in vi mode (bash: set -o vi,
//   also readline's editing-mode; zsh: main linked to viins, which bindkey
//   -v does without setting the vi option): execute clears the line with
//   keys that work in vi's insert and command modes. zsh's keymap (__atv)
//   is read at the first prompt and again after a command line that may
//   change it (bindkey, set/setopt, source, .), not at every prompt: a
//   command substitution forks, and a fork of zsh cost 1-13 ms here,
//   against ~1 ms for a session's whole execute.
// - It leaves __atk holding a newline for each line the expanded prompt has
//   above its last one (see login_hook.cpp). [^...], not [!...]: `!$` is
//   history expansion.
// - Its variables are __at and one letter (n: nonce, A/B/C: marks, k, p/q:
//   bash's PROMPT_COMMAND entries, r: the others): the line is typed, and at
//   80x24 a longer echo would push the login's last lines off the screen.
constexpr std::string_view kHook =
    R"( __atn=NONCE; __atC='\e]133;C;n=NONCE\a'; case ${ZSH_VERSION-} in )"
    R"('') __atA='\[\e]133;A;s=$?;p=$$;n=NONCE\a\]'; __atB='\[\e]133;B;n=NONCE\a\]';; )"
    R"(*) __atA=$'%{\e]133;A;s=%?;p='$$$';n=NONCE\a%}'; __atB=$'%{\e]133;B;n=NONCE\a%}';; )"
    R"(esac; __agentty_precmd() { { local s=$? w=${PWD//\%/%25} )"
    R"(e=${ZSH_VERSION:+${__atv:=$(bindkey -lL main)}}; w=${w//;/%3B}; )"
    R"([[ $e == *' vi'* || -z $e && -o vi ]] && e=';e=vi' || e=; )"
    R"(printf '\e]133;D;%s;p=%s;w=%s%s;n=%s\a' "$s" $$ "${w//$'\n'/%0A}" "$e" $__atn; )"
    R"(${__atS:+__agentty_sp}; return $s; } 2>/dev/null; }; )"
    R"(__agentty_postcmd() { { local s=$?; PS1=${PS1//"$__atA"/}; )"
    R"(PS1=$__atA${PS1//"$__atB"/}$__atB; PS0=${PS0//"$__atC"/}$__atC; )"
    R"(return $s; } 2>/dev/null; }; )"
    R"(case ${ZSH_VERSION-} in '') __atp='{ __agentty_precmd; } 2>/dev/null'; )"
    R"(__atq=${__atp/pre/post}; __atr=("${PROMPT_COMMAND[@]//"$__atp"/:}"); )"
    R"(__atr=("${__atr[@]//"$__atq"/:}"); if [[ ${PROMPT_COMMAND[@]@a} == *a* ]]; then )"
    R"(PROMPT_COMMAND=("$__atp" "${__atr[@]}" "$__atq"); )"
    R"(else PROMPT_COMMAND=$__atp$'\n'${__atr-}$'\n'$__atq; fi; )"
    R"(__atk=${PS1@P};; )"
    R"(*) __agentty_preexec() { { [[ $1 = *(bindkey|set|sour|. )* ]]&&__atv=; )"
    R"(local c=${1//\%/%25}; c=${c//;/%3B}; c=${c//$'\n'/%0A}; )"
    R"(c=${c//$'\r'/%0D}; c=${c//$'\e'/%1B}; )"
    R"(printf '\e]133;E;%s;n=%s\a' "${c//$'\a'/%07}" $__atn; print -n $__atC; } )"
    R"(2>/dev/null; }; )"
    R"(precmd_functions=(__agentty_precmd ${precmd_functions:#__agentty_*} __agentty_postcmd); )"
    R"(preexec_functions=(${preexec_functions:#__agentty_*} __agentty_preexec); )"
    R"(unsetopt prompt_sp; __atk=${(%%)PS1};; esac; )"
    R"(__agentty_postcmd; __atk=${__atk//[^$'\n']/})";

// zsh's rc file only (it is not typed: the typed hook line, ~1.5 KB, must
// not scroll a host's login text off an 80x24 screen): PROMPT_SP as the
// user left it, read before the hook turns it off, and the filler the
// hook's precmd prints after the D mark when it was on (see kHook). zsh
// prints it only with PROMPT_CR, and one column shorter where TERM lacks
// xenl, which agentty's screen and viewers have whatever TERM says.
constexpr std::string_view kZshPromptSp =
    R"([[ -o prompt_sp ]] && __atS=1
__agentty_sp() {
  [[ -o prompt_cr ]] || return
  local m=${PROMPT_EOL_MARK-%B%S%#%s%b} z='%([BSUbfksu]|([FK]|){*})'
  local w=${(m)#${(S%)m//$~z/}}
  printf '%s%*s\r%*s\r\e]133;S;n=%s\a' "${(%)m}" $((COLUMNS-w)) '' $w '' $__atn
}
)";

constexpr std::string_view kBashRc =
    "# Generated by agentty: the usual interactive startup, then agentty's prompt hook.\n"
    "[ -f /etc/bash.bashrc ] && . /etc/bash.bashrc\n"
    "[ -f ~/.bashrc ] && . ~/.bashrc\n";

constexpr std::string_view kZshEnv =
    "# Generated by agentty: the user's .zshenv, then back to agentty's ZDOTDIR for .zshrc.\n"
    "__agentty_zdotdir=$ZDOTDIR\n"
    "ZDOTDIR=${AGENTTY_USER_ZDOTDIR:-$HOME}\n"
    "[[ -f $ZDOTDIR/.zshenv ]] && source $ZDOTDIR/.zshenv\n"
    "ZDOTDIR=$__agentty_zdotdir\n";

constexpr std::string_view kZshRc =
    R"(# Generated by agentty: the user's .zshrc, then agentty's prompt hooks.
ZDOTDIR=${AGENTTY_USER_ZDOTDIR:-$HOME}
unset AGENTTY_USER_ZDOTDIR __agentty_zdotdir
[[ -f $ZDOTDIR/.zshrc ]] && source $ZDOTDIR/.zshrc
)";

// sh's marks, in PS1 alone (dash has no prompt hooks; it expands $? and
// $PWD in PS1, not encoded: a directory name with `;` or `%` reads wrongly
// in ps's shell_cwd): D (k=sh: no C mark comes, see ShellIntegration::sh_marks) then A before
// the user's prompt, B after it. Written with printf so the
// line can also be typed (rearm) without control bytes in its echo.
std::string sh_prompt_assignment(std::string_view nonce) {
  const std::string n(nonce);
  return "PS1=\"$(printf '\\033]133;D;')\\$?$(printf ';p=%s;' $$)w=\\$PWD$(printf ';k=sh;n=" + n +
         "\\007\\033]133;A;n=" + n + "\\007')${PS1:-\\$ }$(printf '\\033]133;B;n=" + n +
         "\\007')\"; PS2=''";
}

std::string sh_env(std::string_view nonce) {
  return "# Generated by agentty: the user's $ENV, then a prompt carrying agentty's marks.\n"
         "[ -n \"$AGENTTY_USER_ENV\" ] && [ -f \"$AGENTTY_USER_ENV\" ] && . \"$AGENTTY_USER_ENV\"\n"
         "unset AGENTTY_USER_ENV\n" +
         sh_prompt_assignment(nonce) + "\n";
}

}  // namespace

std::optional<ShellKind> parse_shell_kind(std::string_view name) {
  if (name == "bash") return ShellKind::bash;
  if (name == "zsh") return ShellKind::zsh;
  if (name == "sh") return ShellKind::sh;
  return std::nullopt;
}

std::string to_string(ShellKind kind) {
  switch (kind) {
    case ShellKind::bash:
      return "bash";
    case ShellKind::zsh:
      return "zsh";
    case ShellKind::sh:
      return "sh";
  }
  return "bash";
}

std::string hook_line(std::string_view nonce) {
  return replace_all(std::string(kHook), "NONCE", nonce);
}

std::string zsh_rc_hook(std::string_view nonce) {
  return std::string(kZshPromptSp) + hook_line(nonce) + "\n";
}

std::string sh_rearm_line(std::string_view nonce) {
  return "case $PS1 in *" + std::string(nonce) + "*) ;; *) " + sh_prompt_assignment(nonce) +
         ";; esac";
}

std::string hook_dispatch_line(std::string_view hook_file, std::string_view nonce) {
  // dash parses the whole line first: the bash/zsh syntax stays in the file.
  // libssh (0.10) sends no terminal modes, so the host's terminal lacks the
  // IUTF8 that OpenSSH's client asks for (and a local PTY has): backspace
  // at a line read erased one byte of a multi-byte character.
  const std::string file = "'" + std::string(hook_file) + "'";
  return " stty iutf8 2>/dev/null; case ${BASH_VERSION-}${ZSH_VERSION-} in '') " +
         sh_rearm_line(nonce) + ";; *) . " + file + ";; esac; rm -f " + file;
}

Expected<ShellLaunch> write_shell_startup(ShellKind kind, const std::string& program,
                                          std::string_view nonce, const std::filesystem::path& dir,
                                          const std::map<std::string, std::string>& user_env) {
  // The user's value of a variable the launch replaces: open's, else the server's.
  auto users = [&](const std::string& name) -> std::optional<std::string> {
    if (auto given = user_env.find(name); given != user_env.end()) return given->second;
    if (const char* value = std::getenv(name.c_str())) return value;
    return std::nullopt;
  };
  // A shell sources these files: nobody else may write them, whatever the umask.
  if (auto made = ensure_private_dir(dir.parent_path()); !made) return make_error(made.error());
  if (auto made = ensure_private_dir(dir); !made) return make_error(made.error());
  ShellLaunch launch;
  launch.files = std::make_shared<OwnedPath>(dir);  // also when a write fails
  switch (kind) {
    case ShellKind::bash: {
      auto rc = dir / "bashrc";
      if (auto ok = write_private_file(rc, std::string(kBashRc) + hook_line(nonce) + "\n"); !ok)
        return make_error(ok.error());
      launch.argv = {program, "--rcfile", rc.string(), "-i"};
      break;
    }
    case ShellKind::zsh: {
      if (auto ok = write_private_file(dir / ".zshenv", kZshEnv); !ok)
        return make_error(ok.error());
      if (auto ok = write_private_file(dir / ".zshrc", std::string(kZshRc) + zsh_rc_hook(nonce));
          !ok) {
        return make_error(ok.error());
      }
      launch.argv = {program, "-i"};
      if (auto user_zdotdir = users("ZDOTDIR")) launch.env["AGENTTY_USER_ZDOTDIR"] = *user_zdotdir;
      launch.env["ZDOTDIR"] = dir.string();
      break;
    }
    case ShellKind::sh: {
      auto env_file = dir / "shrc";
      if (auto ok = write_private_file(env_file, sh_env(nonce)); !ok) return make_error(ok.error());
      if (auto user_rc = users("ENV")) launch.env["AGENTTY_USER_ENV"] = *user_rc;
      launch.env["ENV"] = env_file.string();
      launch.argv = {program, "-i"};
      break;
    }
  }
  return launch;
}

}  // namespace agentty::session
