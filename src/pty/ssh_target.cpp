#include "pty/ssh_target.hpp"

#include <charconv>

namespace agentty::pty {

namespace {

Expected<int> parse_port(std::string_view text, std::string_view spec) {
  int port = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (ec != std::errc() || end != text.data() + text.size() || port < 1 || port > 65535)
    return make_error("bad port in SSH target '" + std::string(spec) +
                      "': expected a number from 1 to 65535");
  return port;
}

}  // namespace

Expected<SshTarget> SshTarget::parse(std::string_view spec) {
  SshTarget target;
  std::string_view rest = spec;
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    target.user = std::string(rest.substr(0, at));
    rest = rest.substr(at + 1);
    if (target.user.empty())
      return make_error("empty user in SSH target '" + std::string(spec) + "'");
  }
  std::string_view port_text;
  if (!rest.empty() && rest.front() == '[') {
    auto close = rest.find(']');
    if (close == std::string_view::npos)
      return make_error("unclosed '[' in SSH target '" + std::string(spec) + "'");
    target.host = std::string(rest.substr(1, close - 1));
    rest = rest.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':')
        return make_error("expected ':port' after ']' in SSH target '" + std::string(spec) + "'");
      port_text = rest.substr(1);
    }
  } else if (auto colon = rest.find(':'); colon != std::string_view::npos) {
    if (rest.find(':', colon + 1) != std::string_view::npos)
      return make_error("IPv6 address in SSH target '" + std::string(spec) +
                        "' must be written as [address]:port");
    target.host = std::string(rest.substr(0, colon));
    port_text = rest.substr(colon + 1);
  } else {
    target.host = std::string(rest);
  }
  if (target.host.empty())
    return make_error("empty host in SSH target '" + std::string(spec) +
                      "': expected host, user@host or user@host:port");
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

}  // namespace agentty::pty
