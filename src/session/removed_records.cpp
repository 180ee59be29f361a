#include "session/removed_records.hpp"

namespace agentty::session {

void RemovedRecords::add(const std::string& id, RemovalCause cause) {
  auto [it, added] =
      by_id_.insert_or_assign(id, RemovedRecord{cause, std::chrono::system_clock::now()});
  if (!added) return;  // an id is removed once; keep its place
  order_.push_back(id);
  if (order_.size() <= kCapacity) return;
  by_id_.erase(order_.front());
  order_.pop_front();
}

std::optional<RemovedRecord> RemovedRecords::find(const std::string& id) const {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return std::nullopt;
  return it->second;
}

std::string describe(RemovalCause cause) {
  switch (cause) {
    case RemovalCause::cleanup:
      return "by cleanup";
    case RemovalCause::retention:
      return "because it ended longer ago than the retention time (--retention-ms)";
    case RemovalCause::max_retained:
      return "to keep the number of ended records under --max-retained";
    case RemovalCause::spool_budget:
      return "to keep the output of all executions under "
             "AGENTTY_MAX_TOTAL_SPOOL_BYTES";
  }
  return "";
}

}  // namespace agentty::session
