// AuditLog: an append-only JSON-lines record of what was asked of agentty and
// by whom: one line per tool call and per human event (takeover, release,
// handoff), for the operator to review afterwards.
//
// Each line is one JSON object whose first field is "time" (RFC 3339, UTC,
// milliseconds, e.g. "2025-05-01T12:00:00.123Z"), added by record(); any
// "time" in the given record is replaced. Record fields:
//   tool call:   {kind:"tool", tool, execution_id, purpose, side_effects[],
//                 command, status, exit_code (null if none), held, bytes,
//                 error (only on failure)}        -> ToolCallRecord
//   human event: {kind:"takeover"|"release"|"handoff", execution_id, who,
//                 reason}                         -> HumanEventRecord
// Other records (e.g. the web server's {event, execution_id, who, detail},
// the MCP server's {kind:"client_elicitation", execution_id, elicitation_id,
// state}) are written as given.
//
// Secrets: every string (keys and values, nested too) first goes through the
// optional `redact` callback, then each configured secret (e.g. the web
// access secret) is replaced with "[REDACTED]". A line that would still
// contain a secret is replaced by a placeholder record, so a secret is never
// written. Invalid UTF-8 becomes U+FFFD.
//
// Rotation: before a line would take the file past `max_bytes`, the file is
// renamed to PATH.1 (PATH.1 -> PATH.2 ..., keeping `keep_files` old files)
// and a new one is started. Files are created 0600 with O_APPEND|O_CLOEXEC.
//
// Failure to write never fails the caller's operation, but is never silent
// either: the first failure of a run is logged as an error naming the file,
// the cause and the fix (spdlog, stderr); a record cut short is taken back
// (ftruncate), so every line stays whole JSON; and the first record written
// afterwards is preceded by {event:"audit_records_lost", lost_records, error}
// so the file itself shows the gap. last_error() says what went wrong last.
// A file that is not a regular file of ours (/dev/null, a FIFO) is used as
// it is: its permissions are not changed.
//
// Threading: record() may be called from any thread (the MCP handlers and
// the web server); a mutex serialises writes and rotation.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "base/unique_fd.hpp"

namespace agentty::session {

struct AuditLogOptions {
  std::filesystem::path path;  // missing parent directories are created
  std::uint64_t max_bytes = 10ull << 20;
  unsigned keep_files = 3;                              // rotated files kept (0: none)
  std::vector<std::string> secrets;                     // never written; empty ones ignored
  std::function<std::string(std::string_view)> redact;  // optional, applied to every string
  // False for the default file in the state directory: a symbolic link
  // there is refused (ELOOP), not written through; a path the operator
  // chose may be one.
  bool follow_links = true;
};

struct ToolCallRecord {
  std::string tool;
  std::string execution_id;
  std::string purpose;
  std::vector<std::string> side_effects;
  std::string command;
  std::string status;
  std::optional<int> exit_code;
  bool held = false;
  std::uint64_t bytes = 0;  // output bytes returned to the agent
  std::string error;        // empty: none
  nlohmann::json to_json() const;
};

enum class HumanEventKind { takeover, release, handoff };

struct HumanEventRecord {
  HumanEventKind kind = HumanEventKind::takeover;
  std::string execution_id;
  std::string who;
  std::string reason;
  nlohmann::json to_json() const;
};

class AuditLog {
 public:
  static Expected<std::unique_ptr<AuditLog>> open(AuditLogOptions options);
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  void record(const nlohmann::json& record);
  void record(const ToolCallRecord& record) { this->record(record.to_json()); }
  void record(const HumanEventRecord& record) { this->record(record.to_json()); }

  const std::filesystem::path& path() const { return options_.path; }
  std::string last_error() const;  // empty: no write has failed

  // "2025-05-01T12:00:00.123Z" for now.
  static std::string now_rfc3339();

 private:
  explicit AuditLog(AuditLogOptions options);
  Expected<void> open_file();
  void rotate();
  std::string redact_string(std::string_view text) const;
  nlohmann::json redact_json(const nlohmann::json& value) const;
  std::string format_line(const nlohmann::json& record) const;
  bool contains_secret(std::string_view text) const;
  // Writes all of `text` or nothing (a partial write is truncated away).
  Expected<void> write_whole(std::string_view text);
  void note_failure(const std::string& error);

  AuditLogOptions options_;  // secrets sorted longest first
  mutable std::mutex mutex_;
  UniqueFd fd_;
  std::uint64_t size_ = 0;
  std::string last_error_;
  std::uint64_t lost_records_ = 0;  // since the last successful write
  bool line_open_ = false;          // a cut record could not be taken back
};

}  // namespace agentty::session
