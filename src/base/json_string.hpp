// JSON string literals written fast, for hot paths (asciicast recordings see
// every byte a program prints). Same output as nlohmann::json's dump with
// error_handler_t::replace: quotes, backslashes and control characters are
// escaped, valid UTF-8 is copied as is, and every byte of an invalid UTF-8
// sequence (RFC 3629: no overlongs, surrogates or code points past U+10FFFF)
// becomes U+FFFD. Runs of plain ASCII are copied in one go.
#pragma once

#include <string>
#include <string_view>

namespace agentty {

// Appends `text` as a quoted JSON string literal to `out`.
void append_json_string(std::string& out, std::string_view text);

}  // namespace agentty
