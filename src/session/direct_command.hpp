// DirectCommand: running a simple `command` line without starting bash.
//
// Why: `execute(command="ls -la")` is specified as `bash -c 'ls -la'`, and
// for a simple command bash does nothing but split the words, find the
// program in PATH and exec it in its own place (its one-shot optimisation:
// the program replaces bash, so the process tree is the same). Starting bash
// to do that costs ~2.5 ms on a small VM, as much as the program itself. GNU
// make has skipped the shell for such lines for decades; this does the same,
// and only where the result cannot differ from what bash would do:
//
//  - every word is made of [A-Za-z0-9_./,:@%+-] (and `=` after the first
//    word), so there is nothing to quote, expand, glob, redirect or join;
//  - the first word is not an assignment, a reserved word or a builtin
//    (except `echo` with no word starting with `-`, which prints exactly what
//    coreutils' /bin/echo prints) and no exported function overrides it;
//  - BASH_ENV, SHELLOPTS and BASHOPTS are unset (bash would source a file or
//    set options such as xtrace first);
//  - PATH is set and absolute, and the program is found in it (or named by a
//    path) as an executable regular file that starts with `#!` or an ELF
//    header (bash would run anything else as a bash script).
//
// Anything else returns nullopt and runs under bash as before. The program
// sees the environment bash would have given it: PWD (kept if it names the
// working directory, else the physical path), SHLVL (0 when unset; a one-shot
// exec does not raise it) and `_` (the program's path).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace agentty::session {

struct DirectCommand {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // the overlay given, plus PWD, SHLVL and `_`
};

// `env` is the overlay on the server's environment; `cwd` the working
// directory (empty: the server's).
std::optional<DirectCommand> direct_command(std::string_view line,
                                            const std::map<std::string, std::string>& env,
                                            const std::string& cwd);

}  // namespace agentty::session
