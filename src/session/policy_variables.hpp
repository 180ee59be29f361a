// The environment variables that configure the policy (PolicyConfig):
// parsed in policy_config.cpp, named in Policy's refusals (policy.cpp) so
// the operator knows what to change.
#pragma once

#include <string_view>

namespace agentty::session {

inline constexpr std::string_view kBlockedVar = "AGENTTY_BLOCKED_SIDE_EFFECTS";
inline constexpr std::string_view kAllowedCwdsVar = "AGENTTY_ALLOWED_CWDS";
inline constexpr std::string_view kDenyVar = "AGENTTY_DENY_COMMAND_REGEX";
inline constexpr std::string_view kAllowVar = "AGENTTY_ALLOW_COMMAND_REGEX";
inline constexpr std::string_view kRedactVar = "AGENTTY_REDACT_ENV_REGEX";
inline constexpr std::string_view kMaxExecutionsVar = "AGENTTY_MAX_EXECUTIONS";
inline constexpr std::string_view kMaxSessionsVar = "AGENTTY_MAX_SESSIONS";
inline constexpr std::string_view kMaxSpoolVar = "AGENTTY_MAX_SPOOL_BYTES";
inline constexpr std::string_view kMaxTotalSpoolVar = "AGENTTY_MAX_TOTAL_SPOOL_BYTES";
inline constexpr std::string_view kMaxRequestVar = "AGENTTY_MAX_REQUEST_BYTES";
inline constexpr std::string_view kMaxRecordingBytesVar = "AGENTTY_MAX_RECORDING_BYTES";
inline constexpr std::string_view kMaxRecordingsVar = "AGENTTY_MAX_RECORDINGS";

}  // namespace agentty::session
