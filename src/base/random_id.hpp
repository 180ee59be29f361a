// Random identifiers and secrets from OpenSSL's CSPRNG.
#pragma once

#include <cstddef>
#include <string>

namespace agentty {

// `bytes` random bytes as lowercase hex (2*bytes characters).
std::string random_hex(std::size_t bytes);

// Constant-time equality, for comparing secrets.
bool secure_equals(const std::string& a, const std::string& b);

}  // namespace agentty
