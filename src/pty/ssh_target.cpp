#include "pty/ssh_target.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <optional>

namespace agentty::pty {

namespace {

constexpr const char* kAcceptedForms =
    "accepted forms: host, user@host, host:port, user@host:port, [IPv6 address]:port, or an "
    "~/.ssh/config alias";

Error target_error(std::string_view spec, const std::string& what) {
  return Error{"'" + std::string(spec) + "' is not a host (" + what + "); " + kAcceptedForms};
}

// Shows the invisible: a tab or a newline in a message is easy to miss.
std::string visible(std::string_view text) {
  std::string shown;
  for (char c : text) {
    if (c == '\t')
      shown += "\\t";
    else if (c == '\n')
      shown += "\\n";
    else if (c == '\r')
      shown += "\\r";
    else
      shown += c;
  }
  return shown;
}

Expected<int> parse_port(std::string_view text, std::string_view spec) {
  if (text.empty()) return target_error(spec, "no port after ':' (give one or drop the ':')");
  int port = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (ec == std::errc() && end != text.data() && end != text.data() + text.size())
    return target_error(spec, "unexpected '" + std::string(end, text.data() + text.size()) +
                                  "' after port " + std::string(text.data(), end));
  if (ec != std::errc() || end != text.data() + text.size() || port < 1 || port > 65535)
    return target_error(spec,
                        "bad port '" + std::string(text) + "' (expected a number from 1 to 65535)");
  return port;
}

// libssh (0.10.6 on) refuses a host name other than dot-separated labels of
// letters, digits and inner '-', before it reads the ssh config, and gives no
// reason; an alias has to follow the same rule.
std::optional<std::string> host_name_problem(std::string_view host) {
  std::size_t begin = 0;
  while (begin <= host.size()) {
    auto end = std::min(host.find('.', begin), host.size());
    std::string_view label = host.substr(begin, end - begin);
    for (char c : label)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-')
        return "'" + std::string(1, c) +
               "' in host name (only letters, digits, '-' and '.' are accepted, also in an "
               "~/.ssh/config alias)";
    if (!label.empty() && (label.front() == '-' || label.back() == '-'))
      return "a part of the host name starts or ends with '-'";
    if (label.size() > 63) return "a part of the host name is longer than 63 characters";
    begin = end + 1;
  }
  return std::nullopt;
}

}  // namespace

Expected<SshTarget> SshTarget::parse(std::string_view spec) {
  // Junk after a target (a second word, an ssh option, a newline) would
  // otherwise surface as a bad port or a bad host.
  if (auto blank = spec.find_first_of(" \t\r\n"); blank != std::string_view::npos) {
    auto junk = spec.substr(blank);
    auto first = junk.find_first_not_of(" \t\r\n");
    return target_error(visible(spec), first == std::string_view::npos
                                           ? "white space at the end (remove it)"
                                           : "white space before '" + visible(junk.substr(first)) +
                                                 "' (a target is one word: remove what follows '" +
                                                 visible(spec.substr(0, blank)) + "')");
  }
  SshTarget target;
  std::string_view rest = spec;
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    target.user = std::string(rest.substr(0, at));
    rest = rest.substr(at + 1);
    if (target.user.empty()) return target_error(spec, "empty user before '@'");
  }
  std::string_view port_text;
  bool bracketed = !rest.empty() && rest.front() == '[';
  if (bracketed) {
    auto close = rest.find(']');
    if (close == std::string_view::npos) return target_error(spec, "unclosed '['");
    target.host = std::string(rest.substr(1, close - 1));
    rest = rest.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':')
        return target_error(spec, "unexpected '" + std::string(rest) + "' after ']'");
      port_text = rest.substr(1);
    }
  } else if (auto colon = rest.find(':'); colon != std::string_view::npos) {
    if (rest.find(':', colon + 1) != std::string_view::npos)
      return target_error(spec, "an IPv6 address must be in brackets: [address] or [address]:port");
    target.host = std::string(rest.substr(0, colon));
    port_text = rest.substr(colon + 1);
  } else {
    target.host = std::string(rest);
  }
  if (target.host.empty()) return target_error(spec, "empty host");
  if (!bracketed)
    if (auto problem = host_name_problem(target.host)) return target_error(spec, *problem);
  if (!port_text.empty() || rest.ends_with(':')) {
    auto port = parse_port(port_text, spec);
    if (!port) return Error{port.error()};
    target.port = *port;
  }
  return target;
}

std::string SshTarget::describe() const {
  std::string text = user.empty() ? "" : user + "@";
  text += host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (port != 0) text += ":" + std::to_string(port);
  return text;
}

const char* to_string(SshErrorKind kind) {
  switch (kind) {
    case SshErrorKind::bad_target:
      return "bad_target";
    case SshErrorKind::connect_failed:
      return "connect_failed";
    case SshErrorKind::host_key_unknown:
      return "host_key_unknown";
    case SshErrorKind::host_key_changed:
      return "host_key_changed";
    case SshErrorKind::needs_human_auth:
      return "needs_human_auth";
    case SshErrorKind::auth_failed:
      return "auth_failed";
    case SshErrorKind::channel_failed:
      return "channel_failed";
    case SshErrorKind::connection_lost:
      return "connection_lost";
    case SshErrorKind::shut_down:
      return "shut_down";
  }
  return "unknown";
}

std::string libssh_home() {
  if (const passwd* entry = ::getpwuid(::getuid()); entry && entry->pw_dir && *entry->pw_dir)
    return entry->pw_dir;
  const char* home = std::getenv("HOME");
  return home ? home : "";
}

std::string known_hosts_name(const std::string& host, unsigned port) {
  return port == 22 ? host : "[" + host + "]:" + std::to_string(port);
}

std::string shell_quote(std::string_view text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

std::string shell_word(std::string_view word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_-./=:@%+,") == std::string_view::npos;
  return plain ? std::string(word) : shell_quote(word);
}

std::string enter_directory_or_exit(std::string_view directory) {
  // "~" and "~/..." are the remote account's home, as a person typing cd
  // there means; the rest stays quoted (no other expansion).
  std::string target = shell_quote(directory);
  if (directory == "~")
    target = "\"$HOME\"";
  else if (directory.starts_with("~/"))
    target = "\"$HOME\"/" + shell_quote(directory.substr(2));
  return "cd -- " + target + " || exit 1";
}

// Whether `command` puts something in the background: an `&` outside quotes
// that is not part of `&&`, `|&`, `>&`, `<&` or `&>`. A comment ends the scan.
bool has_background_job(std::string_view command) {
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"')
        ++i;
      continue;
    }
    if (c == '\\') {
      ++i;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(command[i - 1])))) {
      while (i < command.size() && command[i] != '\n') ++i;
    } else if (c == '&') {
      const char before = i > 0 ? command[i - 1] : ' ';
      const char after = i + 1 < command.size() ? command[i + 1] : ' ';
      if (after == '&') {
        ++i;  // && (the second & is not a job)
      } else if (before != '|' && before != '>' && before != '<' && after != '>') {
        return true;
      }
    }
  }
  return false;
}

std::string waiting_for_background_jobs(std::string_view command) {
  if (!has_background_job(command)) return std::string(command);
  // kCommandEndMarker: printf's format turns \033 and \007 into its ESC and BEL.
  return R"(trap 'printf "\033]7771;agentty-command-ended\007"; wait' EXIT; )" +
         std::string(command);
}

std::optional<std::string> with_standard_input(std::string_view command, std::string_view data) {
  // printf's %b reads \\ as a backslash, \n as a newline and \0ooo as an
  // octal byte; a NUL cannot be in a command line at all. Every other byte
  // stands for itself. A newline is escaped too: the data then takes no line
  // of the shell's, and the command's errors name its own line numbers.
  std::string escaped;
  escaped.reserve(data.size() + data.size() / 8);
  for (char c : data) {
    if (c == '\\')
      escaped += "\\\\";
    else if (c == '\0')
      escaped += "\\0000";
    else if (c == '\n')
      escaped += "\\n";
    else
      escaped += c;
  }
  // The command starts on the first line (as `$SHELL -c COMMAND` would run
  // it) in a subshell whose parenthesis closes on a line of its own, so a
  // trailing comment or a here-document in it cannot swallow it.
  std::string line = "printf '%b' " + shell_quote(escaped) + " | ( " + std::string(command) + "\n)";
  if (line.size() > kMaxRemoteCommandBytes) return std::nullopt;
  return line;
}

}  // namespace agentty::pty
