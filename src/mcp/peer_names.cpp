#include "mcp/peer_names.hpp"

#include <algorithm>
#include <array>
#include <cstring>  // sigabbrev_np
#include <string_view>

#include "base/ascii_case.hpp"

namespace agentty::mcp {

namespace {

struct PeerTool {
  std::string_view name;
  std::string_view advice;
};

constexpr std::array kPeerTools = {
    PeerTool{"exec", "execute (command, side_effects)"},
    PeerTool{"bash", "execute with command (a shell line) and side_effects"},
    PeerTool{"run", "execute with argv (no shell) and side_effects"},
    PeerTool{"script", "execute with script (checked with bash -n first) and side_effects"},
    PeerTool{"get",
             "wait (blocks up to timeout_ms for the end) or read (at once), with the "
             "execution_id that execute returned"},
    PeerTool{"terminal_open", "open (a shell session; host for SSH)"},
    PeerTool{"terminal_send",
             "execute with session=ID and command (a command line in the session), or write "
             "to type into a running program"},
    PeerTool{"terminal_output",
             "read (without since_seq: every new byte once, like since_last; tail_lines=N: a "
             "glance at the end, like tail)"},
    PeerTool{"terminal_explore", "explore (op stat, grep or read) with the execution_id"},
    PeerTool{"terminal_control",
             "write with keys (e.g. [\"ctrl-c\"]) or action (flush, rearm); stop or close to end"},
    PeerTool{"terminal_close", "close"},
    PeerTool{"terminal_list", "ps"},
    PeerTool{"terminal_status", "ps (every execution) or read (one)"},
};

struct PeerArgument {
  std::string_view tools;  // space-separated agentty tools that lack it
  std::string_view argument;
  std::string_view advice;
};

constexpr std::string_view kById =
    "read wait write stop screen explore handoff close";  // the tools taking execution_id

constexpr std::array kPeerArguments = {
    PeerArgument{kById, "pid",
                 "execution_id (the opaque id execute or open returned, not the process_id)"},
    PeerArgument{kById, "session_id", "execution_id (open returns it)"},
    PeerArgument{kById, "output_ref", "execution_id (explore searches that execution's output)"},
    PeerArgument{"execute read wait write", "bytes", "max_output_bytes"},
    PeerArgument{"explore", "bytes", "max_bytes"},
    PeerArgument{"read wait write", "streams",
                 "remove it (a terminal merges stdout and stderr into one output)"},
    PeerArgument{"execute", "timeout",
                 "timeout_ms (milliseconds; 0 = none) to end the process after that long, or "
                 "yield_ms (milliseconds) for how long to wait before it continues in the "
                 "background"},
    PeerArgument{"wait", "timeout", "timeout_ms (milliseconds)"},
    PeerArgument{"execute", "timeout_behavior",
                 "nothing for \"background\" (after yield_ms execute returns status=backgrounded "
                 "and the command keeps running), timeout_ms for \"kill\""},
    PeerArgument{"execute", "wait_ms", "yield_ms"},
    PeerArgument{"execute", "shell",
                 "argv, e.g. [\"zsh\", \"-c\", \"CMD\"], for another shell (command runs in the "
                 "server's shell, bash), or open(shell=...) for a session"},
    PeerArgument{"write", "close_stdin",
                 "eof=true (a terminal has no stdin to close: eof sends its end-of-file)"},
    PeerArgument{"write", "key", "keys (a list, e.g. [\"ctrl-c\"])"},
    PeerArgument{"read", "mode",
                 "tail_lines=N for a glance at the end (mode=tail); no since_seq to get every "
                 "new byte once (mode=since_last)"},
    PeerArgument{"read", "tail_bytes", "tail_lines=N, with max_output_bytes as the byte cap"},
    PeerArgument{"open", "mode", "host for SSH (mode=ssh); no host for local (mode=local)"},
    // Names a model guesses from other tools and APIs.
    PeerArgument{kById, "id", "execution_id"},
    PeerArgument{kById, "execution", "execution_id"},
    PeerArgument{"write", "text", "input (newline=true presses Enter after it)"},
    PeerArgument{"write", "data", "input (newline=true presses Enter after it)"},
    PeerArgument{"write", "stdin", "input (typed into the terminal; eof=true ends it)"},
    PeerArgument{"write", "command",
                 "input with newline=true to type a line into the running program; to run a "
                 "command in a session, execute with session=ID"},
    PeerArgument{"execute", "cmd", "command (a shell line) or argv (a list, no shell)"},
    PeerArgument{"execute", "args", "argv (the program and its arguments, no shell)"},
    PeerArgument{"execute open", "dir", "cwd"},
    PeerArgument{"execute open", "directory", "cwd"},
    PeerArgument{"execute open", "workdir", "cwd"},
    PeerArgument{"execute open", "working_directory", "cwd"},
    PeerArgument{"execute open", "environment", "env (an object of NAME: value)"},
    PeerArgument{"execute", "input", "stdin (the program's standard input)"},
    PeerArgument{"execute", "session_id", "session (the execution_id open returned)"},
    PeerArgument{"wait", "regex", "pattern (PCRE2)"},
    PeerArgument{"wait", "for", "until (exit, idle, match, input or released)"},
    PeerArgument{"stop", "force", "signal=\"SIGKILL\" (or force_after_ms to escalate later)"},
    PeerArgument{"explore", "action", "op (stat, grep or read)"},
    PeerArgument{"explore", "mode", "op (stat, grep or read)"},
    PeerArgument{"explore", "query", "pattern (PCRE2, with op=grep)"},
    PeerArgument{"explore", "regex", "pattern (PCRE2, with op=grep)"},
    PeerArgument{"explore", "search", "op=grep with pattern"},
    PeerArgument{"explore", "offset", "line_offset (with op=read; -N counts from the end)"},
    PeerArgument{"explore", "context", "before and after (lines around each grep match)"},
    PeerArgument{"explore", "case_insensitive", "ignore_case"},
    PeerArgument{"wait", "ignore_case", "(?i) at the start of pattern"},
    PeerArgument{"wait", "case_insensitive", "(?i) at the start of pattern"},
};

// Values a peer takes that agentty spells differently or does with another call.
struct PeerValue {
  std::string_view tool;
  std::string_view argument;
  std::string_view value;
  std::string_view advice;
};

constexpr std::string_view kSuspendAdvice =
    "write with keys=[\"ctrl-z\"] suspends the program in the foreground (stop ends an "
    "execution)";

constexpr std::array kPeerValues = {
    PeerValue{"write", "keys", "ctrl-\\", "\"ctrl-backslash\" (ctrl-\\, SIGQUIT)"},
    PeerValue{"write", "keys", "space", "input=\" \" (a space is typed as text)"},
    PeerValue{"write", "action", "hard",
              "close this session, then open a new one (a fresh shell, with a new "
              "execution_id)"},
    PeerValue{"stop", "signal", "SIGSTOP", kSuspendAdvice},
    PeerValue{"stop", "signal", "SIGTSTP", kSuspendAdvice},
    PeerValue{"stop", "signal", "SIGCONT",
              "write with action=\"resume\" continues a suspended program"},
};

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// A key as other tools write it (Ctrl+C, CTRL_C, ^C, tmux's C-c, Escape,
// Return, PgUp) in agentty's spelling, which may or may not be allowed.
std::string key_spelling(const std::string& key) {
  std::string name = ascii_lowercase(key);
  std::replace_if(
      name.begin(), name.end(), [](char c) { return c == '+' || c == '_' || c == ' '; }, '-');
  if (name.size() == 2 && name[0] == '^') name = "ctrl-" + name.substr(1);
  for (std::string_view prefix : {"control-", "c-"}) {
    if (name.starts_with(prefix)) name = "ctrl-" + name.substr(prefix.size());
  }
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 16> kNames = {{
      {"escape", "esc"},
      {"return", "enter"},
      {"ret", "enter"},
      {"bspace", "backspace"},
      {"bs", "backspace"},
      {"del", "delete"},
      {"ins", "insert"},
      {"pgup", "pageup"},
      {"page-up", "pageup"},
      {"ppage", "pageup"},
      {"pgdn", "pagedown"},
      {"page-down", "pagedown"},
      {"npage", "pagedown"},
      {"btab", "shift-tab"},
      {"arrow-up", "up"},
      {"arrow-down", "down"},
  }};
  for (const auto& [other, ours] : kNames)
    if (name == other) return std::string(ours);
  return name;
}

// A signal as `kill` takes it (TERM, sigterm, 15) in agentty's spelling.
std::string signal_spelling(const std::string& signal) {
  std::string name = ascii_uppercase(signal);
  if (!name.empty() && name.size() < 3 && std::all_of(name.begin(), name.end(), is_digit)) {
    const char* abbreviation = ::sigabbrev_np(std::stoi(name));
    if (!abbreviation) return name;
    name = abbreviation;
  }
  return name.starts_with("SIG") ? name : "SIG" + name;
}

bool lists(std::string_view tools, std::string_view tool) {
  for (std::size_t start = 0; start <= tools.size();) {
    std::size_t end = std::min(tools.find(' ', start), tools.size());
    if (tools.substr(start, end - start) == tool) return true;
    start = end + 1;
  }
  return false;
}

// The argument a validation problem is about ("keys[1]: ..." -> keys, 1).
std::optional<std::pair<std::string, std::optional<std::size_t>>> problem_argument(
    const std::string& problem) {
  const auto colon = problem.find(": ");
  if (colon == std::string::npos) return std::nullopt;
  std::string path = problem.substr(0, colon);
  const auto bracket = path.find('[');
  if (bracket == std::string::npos) return std::pair{path, std::optional<std::size_t>{}};
  if (path.back() != ']') return std::nullopt;
  const std::string index = path.substr(bracket + 1, path.size() - bracket - 2);
  if (index.empty() || index.size() > 6 || !std::all_of(index.begin(), index.end(), is_digit))
    return std::nullopt;
  return std::pair{path.substr(0, bracket), std::optional<std::size_t>(std::stoul(index))};
}

std::optional<std::string> value_advice(const std::string& tool, const std::string& argument,
                                        const std::string& value, const nlohmann::json& allowed) {
  for (const auto& peer : kPeerValues)
    if (peer.tool == tool && peer.argument == argument && peer.value == value)
      return std::string(peer.advice);
  std::string spelled = value;
  if (argument == "keys") spelled = key_spelling(value);
  if (argument == "signal") spelled = signal_spelling(value);
  if (spelled == value) return std::nullopt;
  for (const auto& choice : allowed)
    if (choice == spelled) return choice.dump();
  return std::nullopt;
}

}  // namespace

std::optional<std::string> peer_tool_advice(const std::string& tool) {
  for (const auto& peer : kPeerTools)
    if (peer.name == tool) return std::string(peer.advice);
  return std::nullopt;
}

std::string with_peer_argument_advice(const std::string& tool, std::string problem) {
  constexpr std::string_view kUnknown = ": unknown argument;";
  const auto at = problem.find(kUnknown);
  if (at == std::string::npos) return problem;
  const std::string argument = problem.substr(0, at);
  for (const auto& peer : kPeerArguments) {
    if (peer.argument != argument || !lists(peer.tools, tool)) continue;
    problem.insert(at + kUnknown.size(), " instead: " + std::string(peer.advice) + ";");
    break;
  }
  return problem;
}

std::string with_peer_value_advice(const std::string& tool, const nlohmann::json& input_schema,
                                   const nlohmann::json& args, std::string problem) {
  constexpr std::string_view kNotAllowed = " is not one of the allowed values: ";
  const auto at = problem.find(kNotAllowed);
  const auto argument = problem_argument(problem);
  if (at == std::string::npos || !argument || !args.is_object()) return problem;
  const auto& [name, index] = *argument;
  const nlohmann::json* value = args.contains(name) ? &args[name] : nullptr;
  const nlohmann::json* schema = nullptr;
  if (auto properties = input_schema.find("properties");
      properties != input_schema.end() && properties->contains(name))
    schema = &(*properties)[name];
  if (value && schema && index) {
    value = value->is_array() && *index < value->size() ? &(*value)[*index] : nullptr;
    schema = schema->contains("items") ? &(*schema)["items"] : nullptr;
  }
  if (!value || !schema || !value->is_string() || !schema->contains("enum")) return problem;
  auto advice = value_advice(tool, name, value->get<std::string>(), (*schema)["enum"]);
  if (!advice) return problem;
  problem.replace(
      at, kNotAllowed.size(),
      " is not one of the allowed values; instead: " + *advice + ". The allowed values are: ");
  return problem;
}

}  // namespace agentty::mcp
