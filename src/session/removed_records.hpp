// What became of execution ids whose records are gone: an agent that comes
// back to an id after cleanup or retention removed it is told so, with when
// and why, instead of the "unknown id" a typo gets.
//
// Bounded: the newest kCapacity removals are remembered (ids only, ~100 bytes
// each); an older one reads as unknown again.
//
// Threading: used on the registry's event loop only.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>

namespace agentty::session {

enum class RemovalCause {
  cleanup,       // the cleanup tool
  retention,     // ended longer ago than --retention-ms
  max_retained,  // more ended records than --max-retained
  spool_budget,  // the total spool budget needed the room
};

struct RemovedRecord {
  RemovalCause cause;
  std::chrono::system_clock::time_point removed_at;
};

class RemovedRecords {
 public:
  static constexpr std::size_t kCapacity = 4096;

  void add(const std::string& id, RemovalCause cause);
  std::optional<RemovedRecord> find(const std::string& id) const;

 private:
  std::unordered_map<std::string, RemovedRecord> by_id_;
  std::deque<std::string> order_;  // oldest first
};

// "by cleanup", "because it ended longer ago than the retention time", ...:
// what ends "<id> was removed 12 s ago".
std::string describe(RemovalCause cause);

}  // namespace agentty::session
