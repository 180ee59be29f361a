// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID): what some work
// cost, without the time other load held the CPU meanwhile.
#pragma once

#include <chrono>
#include <ctime>

namespace agentty {

inline std::chrono::nanoseconds thread_cpu_time() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

}  // namespace agentty
