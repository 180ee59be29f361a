// JSON string literals written fast, for hot paths (asciicast recordings see
// every byte a program prints). Same output as nlohmann::json's dump with
// error_handler_t::replace for valid UTF-8: quotes, backslashes and control
// characters are escaped, valid UTF-8 is copied as is. Not UTF-8 (RFC 3629:
// no overlongs, surrogates or code points past U+10FFFF) becomes one U+FFFD
// per maximal invalid subpart (scan_utf8), not one per byte as nlohmann
// writes: what the screen model, the text view and a browser's TextDecoder
// show, so a replay lines up with the terminal. Runs of plain ASCII are copied
// in one go.
#pragma once

#include <string>
#include <string_view>

namespace agentty {

// Appends `text` as a quoted JSON string literal to `out`.
void append_json_string(std::string& out, std::string_view text);

}  // namespace agentty
