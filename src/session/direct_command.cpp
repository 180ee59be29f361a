#include "session/direct_command.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/path_search.hpp"
#include "base/unique_fd.hpp"

namespace agentty::session {
namespace {

// bash 5.2's `compgen -b` and `compgen -k`: words bash runs itself.
constexpr std::string_view kShellWords[] = {
    "!",        ".",         ":",        "[",       "[[",      "]]",     "alias",   "bg",
    "bind",     "break",     "builtin",  "caller",  "case",    "cd",     "command", "compgen",
    "complete", "compopt",   "continue", "coproc",  "declare", "dirs",   "disown",  "do",
    "done",     "echo",      "elif",     "else",    "enable",  "esac",   "eval",    "exec",
    "exit",     "export",    "false",    "fc",      "fg",      "fi",     "for",     "function",
    "getopts",  "hash",      "help",     "history", "if",      "in",     "jobs",    "kill",
    "let",      "local",     "logout",   "mapfile", "popd",    "printf", "pushd",   "pwd",
    "read",     "readarray", "readonly", "return",  "select",  "set",    "shift",   "shopt",
    "source",   "suspend",   "test",     "then",    "time",    "times",  "trap",    "true",
    "type",     "typeset",   "ulimit",   "umask",   "unalias", "unset",  "until",   "wait"};

bool plain_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::strchr("_./,:@%+-", c) != nullptr;
}

// The words of `line`, or nullopt if bash could read it as anything more
// than words separated by blanks.
std::optional<std::vector<std::string>> plain_words(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  for (char c : line) {
    if (c == ' ' || c == '\t') {
      if (!word.empty()) words.push_back(std::exchange(word, {}));
    } else if (plain_character(c) || (c == '=' && !words.empty())) {
      word += c;
    } else {
      return std::nullopt;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  if (words.empty()) return std::nullopt;
  return words;
}

std::optional<std::string> variable(const std::map<std::string, std::string>& env,
                                    const std::string& name) {
  if (auto it = env.find(name); it != env.end()) return it->second;
  if (const char* value = std::getenv(name.c_str())) return std::string(value);
  return std::nullopt;
}

// An executable file that exec runs itself (not handed to a shell as a script).
bool runnable_program(const std::string& path) {
  if (!is_executable_file(path)) return false;
  UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  constexpr char kElf[] = {'\x7f', 'E', 'L', 'F'};
  char head[sizeof kElf] = {};
  if (!file || ::read(file.get(), head, sizeof head) < 2) return false;
  return std::memcmp(head, "#!", 2) == 0 || std::memcmp(head, kElf, sizeof kElf) == 0;
}

// Where bash would find `name`, if every PATH entry is absolute.
std::optional<std::string> find_in_path(const std::string& name, const std::string& path) {
  std::string_view rest = path;
  while (true) {
    auto colon = rest.find(':');
    std::string_view directory = rest.substr(0, colon);
    if (directory.empty() || directory.front() != '/') return std::nullopt;
    std::string candidate = std::string(directory) + "/" + name;
    if (is_executable_file(candidate)) return candidate;
    if (colon == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(colon + 1);
  }
}

bool same_directory(const std::string& a, const std::string& b) {
  struct stat first {
  }, second{};
  return ::stat(a.c_str(), &first) == 0 && ::stat(b.c_str(), &second) == 0 &&
         first.st_dev == second.st_dev && first.st_ino == second.st_ino;
}

// bash keeps an inherited absolute PWD naming the directory it starts in,
// else sets the physical path.
std::optional<std::string> working_directory_variable(const std::map<std::string, std::string>& env,
                                                      const std::string& cwd) {
  std::string directory = cwd.empty() ? "." : cwd;
  auto inherited = variable(env, "PWD");
  if (inherited && inherited->starts_with('/') && same_directory(*inherited, directory))
    return inherited;
  char* physical = ::realpath(directory.c_str(), nullptr);
  if (!physical) return std::nullopt;
  std::string result(physical);
  std::free(physical);
  return result;
}

}  // namespace

std::optional<DirectCommand> direct_command(std::string_view line,
                                            const std::map<std::string, std::string>& env,
                                            const std::string& cwd) {
  auto words = plain_words(line);
  if (!words) return std::nullopt;
  const std::string& name = words->front();
  if (variable(env, "BASH_FUNC_" + name + "%%")) return std::nullopt;
  // bash would first source this file, or set these options (xtrace...).
  for (const char* startup : {"BASH_ENV", "SHELLOPTS", "BASHOPTS"}) {
    if (!variable(env, startup).value_or("").empty()) return std::nullopt;
  }

  std::string program;
  if (name == "echo") {
    // The builtin and coreutils differ only on options (and backslashes,
    // which plain_words refuses).
    if (std::any_of(words->begin() + 1, words->end(), [](auto& w) { return w.starts_with('-'); }))
      return std::nullopt;
    program = "/bin/echo";
    words->front() = program;
  } else if (std::ranges::find(kShellWords, name) != std::end(kShellWords)) {
    return std::nullopt;
  } else if (name.find('/') != std::string::npos) {
    // Relative to the program's working directory, as exec resolves it.
    program = name.starts_with('/') || cwd.empty() ? name : cwd + "/" + name;
  } else {
    auto path = variable(env, "PATH");
    auto found = path ? find_in_path(name, *path) : std::nullopt;
    if (!found) return std::nullopt;  // bash says "command not found"
    program = *found;
  }
  if (!runnable_program(program)) return std::nullopt;

  auto pwd = working_directory_variable(env, cwd);
  if (!pwd) return std::nullopt;
  DirectCommand direct{std::move(*words), env};
  direct.env["PWD"] = *pwd;
  direct.env["SHLVL"] = variable(env, "SHLVL").value_or("0");
  direct.env["_"] = name.find('/') != std::string::npos ? name : program;
  return direct;
}

}  // namespace agentty::session
