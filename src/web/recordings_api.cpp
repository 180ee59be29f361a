#include "web/recordings_api.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/unique_fd.hpp"

namespace agentty::web {

namespace {

constexpr std::string_view kExtension = ".cast";
// An asciicast header is one short JSON line; the title is cut at 200 bytes.
constexpr std::size_t kMaxHeaderBytes = 16 * 1024;

struct Found {
  std::filesystem::path path;
  std::string id;
  struct stat info {};
};

long long epoch_ms(const struct timespec& time) {
  return static_cast<long long>(time.tv_sec) * 1000 + time.tv_nsec / 1'000'000;
}

// The header line of an asciicast v2 file, or null if it has none.
nlohmann::json read_header(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return nullptr;
  std::string text(kMaxHeaderBytes, '\0');
  ssize_t got = ::read(fd.get(), text.data(), text.size());
  if (got <= 0) return nullptr;
  text.resize(static_cast<std::size_t>(got));
  auto end = text.find('\n');
  if (end == std::string::npos) return nullptr;
  auto header = nlohmann::json::parse(text.substr(0, end), nullptr, false);
  return header.is_object() ? header : nlohmann::json(nullptr);
}

template <class T>
T field_or(const nlohmann::json& header, const char* name, T fallback) {
  if (!header.is_object() || !header.contains(name)) return fallback;
  const auto& value = header[name];
  if constexpr (std::is_same_v<T, std::string>) {
    return value.is_string() ? value.get<std::string>() : fallback;
  } else {
    return value.is_number() ? value.get<T>() : fallback;
  }
}

bool plain_stem(std::string_view id) {
  if (id.empty() || id.size() > 128 || id.front() == '.') return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
}

}  // namespace

nlohmann::json list_recordings(const std::filesystem::path& dir, std::size_t limit) {
  std::vector<Found> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto& path = it->path();
    auto name = path.filename().string();
    if (name.size() <= kExtension.size() || !name.ends_with(kExtension)) continue;
    Found file{path, name.substr(0, name.size() - kExtension.size())};
    if (!plain_stem(file.id) || ::lstat(path.c_str(), &file.info) != 0 ||
        !S_ISREG(file.info.st_mode)) {
      continue;
    }
    found.push_back(std::move(file));
  }
  const auto newest_first = [](const Found& a, const Found& b) {
    const auto& x = a.info.st_mtim;
    const auto& y = b.info.st_mtim;
    return x.tv_sec != y.tv_sec ? x.tv_sec > y.tv_sec : x.tv_nsec > y.tv_nsec;
  };
  const std::size_t kept = std::min(limit, found.size());
  std::partial_sort(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(kept), found.end(),
                    newest_first);
  auto list = nlohmann::json::array();
  for (std::size_t i = 0; i < kept; ++i) {
    const auto& file = found[i];
    auto header = read_header(file.path);
    list.push_back({
        {"id", file.id},
        {"title", field_or<std::string>(header, "title", "")},
        {"cols", field_or<int>(header, "width", 0)},
        {"rows", field_or<int>(header, "height", 0)},
        {"started_at", field_or<long long>(header, "timestamp", 0) * 1000},
        {"modified_at", epoch_ms(file.info.st_mtim)},
        {"bytes", static_cast<std::uint64_t>(file.info.st_size)},
    });
  }
  return list;
}

std::optional<std::filesystem::path> recording_file(const std::filesystem::path& dir,
                                                    std::string_view id) {
  if (!plain_stem(id)) return std::nullopt;
  auto path = dir / (std::string(id) + std::string(kExtension));
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  return path;
}

}  // namespace agentty::web
