// Key encoder: the bytes a terminal sends for a named key, as the `write`
// tool's `keys` enum names them (ctrl-c, up, f5, ...).
//
// Cursor keys and Home/End depend on DECCKM (application cursor keys, read
// from the screen model's modes): CSI A in normal mode, SS3 A in application
// mode, as xterm does. Other keys do not depend on modes.
//
// Pure functions; any thread.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "session/screen.hpp"

namespace agentty::session {

// Every key name encode_key() accepts, in the order the schema lists them.
std::span<const std::string_view> key_names();

// The bytes for `name`, or nullopt if the name is not one of key_names().
std::optional<std::string> encode_key(std::string_view name, const ScreenModes& modes);

}  // namespace agentty::session
