// Recordings a person can replay in the browser: the asciicast v2 files in
// STATE_DIR/recordings (Registry::attach_recorder writes one per execution;
// their own retention keeps them after the execution's record is gone, so
// this reads the directory, not the registry).
//
// Threading: reads the filesystem only, on the caller's thread (the web
// loop: a listing stats at most max-recordings files and reads `limit`
// header lines).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string_view>

namespace agentty::web {

// Newest first (by modification time), at most `limit` entries, each with
// id, title, cols, rows, started_at and modified_at (ms since the epoch) and
// bytes. A missing directory lists nothing.
nlohmann::json list_recordings(const std::filesystem::path& dir, std::size_t limit);

// The file of recording `id`, if it is a regular file in `dir` (a symbolic
// link there is not followed); `id` must be a plain file stem.
std::optional<std::filesystem::path> recording_file(const std::filesystem::path& dir,
                                                    std::string_view id);

}  // namespace agentty::web
