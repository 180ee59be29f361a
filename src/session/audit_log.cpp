#include "session/audit_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>

#include <spdlog/spdlog.h>

#include "base/errno_message.hpp"
#include "base/fd_io.hpp"
#include "base/private_dir.hpp"

namespace agentty::session {

namespace {

constexpr std::string_view kRedacted = "[REDACTED]";

std::string_view to_string(HumanEventKind kind) {
  switch (kind) {
    case HumanEventKind::takeover:
      return "takeover";
    case HumanEventKind::release:
      return "release";
    case HumanEventKind::handoff:
      return "handoff";
  }
  return "unknown";
}

std::string dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

nlohmann::json ToolCallRecord::to_json() const {
  nlohmann::json out = {{"kind", "tool"},
                        {"tool", tool},
                        {"execution_id", execution_id},
                        {"purpose", purpose},
                        {"side_effects", side_effects},
                        {"command", command},
                        {"status", status},
                        {"exit_code", nullptr},
                        {"held", held},
                        {"bytes", bytes}};
  if (exit_code) out["exit_code"] = *exit_code;
  if (!error.empty()) out["error"] = error;
  return out;
}

nlohmann::json HumanEventRecord::to_json() const {
  return {
      {"kind", to_string(kind)}, {"execution_id", execution_id}, {"who", who}, {"reason", reason}};
}

std::string AuditLog::now_rfc3339() {
  const auto now = std::chrono::system_clock::now();
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char text[40];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + n, sizeof text - n, ".%03dZ", static_cast<int>(ms % 1000));
  return text;
}

Expected<std::unique_ptr<AuditLog>> AuditLog::open(AuditLogOptions options) {
  std::unique_ptr<AuditLog> log(new AuditLog(std::move(options)));
  std::error_code error;
  const auto parent = log->options_.path.parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  if (error) {
    return make_error("cannot create the audit log directory '" + parent.string() +
                      "': " + error.message() +
                      "; make its parent writable, or choose another --state-dir or "
                      "AGENTTY_AUDIT_LOG (--audit-log)");
  }
  const auto& path = log->options_.path;
  if (!log->options_.follow_links && std::filesystem::is_symlink(path, error)) {
    return make_error("the audit log '" + path.string() +
                      "' is a symbolic link, and agentty does not write through links in its "
                      "state directory (whoever planted it chooses which file grows). Remove "
                      "it, or set AGENTTY_AUDIT_LOG to the file you want.");
  }
  if (auto opened = log->open_file(); !opened) {
    return make_error(opened.error() +
                      "; make it writable, or choose another --state-dir or AGENTTY_AUDIT_LOG "
                      "(--audit-log; /dev/null keeps none)");
  }
  return log;
}

AuditLog::AuditLog(AuditLogOptions options) : options_(std::move(options)) {
  auto& secrets = options_.secrets;
  secrets.erase(std::remove(secrets.begin(), secrets.end(), std::string()), secrets.end());
  // Longest first, so a secret that contains another is replaced whole.
  std::sort(secrets.begin(), secrets.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

Expected<void> AuditLog::open_file() {
  const auto& path = options_.path;
  // open() said so of a link; O_NOFOLLOW closes the race.
  const int no_follow = options_.follow_links ? 0 : O_NOFOLLOW;
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | no_follow, 0600));
  if (!fd) {
    return make_error("cannot open the audit log '" + path.string() +
                      "': " + errno_message("open"));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    return make_error("cannot use the audit log '" + path.string() +
                      "': " + errno_message("fstat"));
  }
  make_open_file_private(fd.get());  // an existing file may have looser permissions
  fd_ = std::move(fd);
  size_ = static_cast<std::uint64_t>(info.st_size);
  return {};
}

void AuditLog::rotate() {
  fd_.reset();
  const std::string base = options_.path.string();
  auto numbered = [&](unsigned n) { return base + "." + std::to_string(n); };
  if (options_.keep_files == 0) {
    ::unlink(base.c_str());
  } else {
    ::unlink(numbered(options_.keep_files).c_str());
    for (unsigned n = options_.keep_files - 1; n >= 1; --n) {
      ::rename(numbered(n).c_str(), numbered(n + 1).c_str());  // ENOENT: fewer files so far
    }
    if (::rename(base.c_str(), numbered(1).c_str()) != 0) last_error_ = errno_message("rename");
  }
  if (auto opened = open_file(); !opened) last_error_ = opened.error();
}

std::string AuditLog::redact_string(std::string_view text) const {
  std::string out = options_.redact ? options_.redact(text) : std::string(text);
  for (const auto& secret : options_.secrets) {
    for (auto at = out.find(secret); at != std::string::npos;
         at = out.find(secret, at + kRedacted.size())) {
      out.replace(at, secret.size(), kRedacted);
    }
  }
  return out;
}

nlohmann::json AuditLog::redact_json(const nlohmann::json& value) const {
  if (value.is_string()) return redact_string(value.get_ref<const std::string&>());
  if (value.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : value) out.push_back(redact_json(item));
    return out;
  }
  if (value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, item] : value.items()) out[redact_string(key)] = redact_json(item);
    return out;
  }
  return value;
}

bool AuditLog::contains_secret(std::string_view text) const {
  return std::any_of(
      options_.secrets.begin(), options_.secrets.end(),
      [&](const std::string& secret) { return text.find(secret) != std::string_view::npos; });
}

std::string AuditLog::format_line(const nlohmann::json& record) const {
  nlohmann::json fields =
      record.is_object() ? redact_json(record) : nlohmann::json{{"record", redact_json(record)}};
  fields.erase("time");
  const std::string time = "{\"time\":\"" + now_rfc3339() + "\"";
  std::string body = dump(fields);  // "{...}"
  std::string line = time + (body.size() > 2 ? "," + body.substr(1) : "}") + "\n";
  // Belt and braces: a secret could survive in an escaped or re-formed shape.
  if (contains_secret(line)) {
    line = time + ",\"error\":\"record withheld: it would have contained a secret\"}\n";
  }
  return line;
}

void AuditLog::record(const nlohmann::json& record) {
  const std::string line = format_line(record);
  std::lock_guard lock(mutex_);
  if (size_ > 0 && size_ + line.size() > options_.max_bytes) rotate();
  if (!fd_) {
    if (auto opened = open_file(); !opened) return note_failure(opened.error());
  }
  std::string text = line_open_ ? "\n" : "";
  if (lost_records_ > 0) {
    text += format_line(
        {{"event", "audit_records_lost"}, {"lost_records", lost_records_}, {"error", last_error_}});
  }
  text += line;
  if (auto written = write_whole(text); !written) return note_failure(written.error());
  if (lost_records_ > 0) {
    spdlog::warn("audit log {}: writing again; {} record(s) were lost (noted in the log)",
                 options_.path.string(), lost_records_);
  }
  lost_records_ = 0;
  line_open_ = false;
}

Expected<void> AuditLog::write_whole(std::string_view text) {
  std::size_t written = 0;
  auto result = write_all(fd_.get(), text, &written);
  if (!result && written > 0) {
    // A part of a record: cut it off, or at least start the next on a new line.
    if (::ftruncate(fd_.get(), static_cast<off_t>(size_)) != 0) {
      size_ += written;
      line_open_ = true;
    }
  } else {
    size_ += written;
  }
  return result;
}

void AuditLog::note_failure(const std::string& error) {
  last_error_ = error;
  if (lost_records_++ == 0) {
    spdlog::error(
        "audit log {}: {}: tool calls and takeovers are not being recorded until it can be "
        "written again (free space on its filesystem, or fix its permissions; "
        "AGENTTY_AUDIT_LOG chooses another file); the gap will be noted in the log",
        options_.path.string(), error);
  }
}

std::string AuditLog::last_error() const {
  std::lock_guard lock(mutex_);
  return last_error_;
}

}  // namespace agentty::session
