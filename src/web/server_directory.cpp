#include "web/server_directory.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>

#include "base/errno_message.hpp"
#include "base/private_dir.hpp"
#include "base/proc_stat.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace agentty::web {
namespace fs = std::filesystem;

namespace {
constexpr std::size_t kMaxEntryBytes = 64 * 1024;
constexpr std::string_view kEntrySuffix = ".json";
constexpr std::string_view kTempSuffix = ".tmp";

// A small file, or "" when it cannot be read (gone, unreadable, too big).
std::string read_small_file(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return {};
  std::string text(kMaxEntryBytes + 1, '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(file.gcount()));
  return text.size() > kMaxEntryBytes ? std::string() : text;
}

// "123" -> 123; anything but a positive decimal pid -> 0.
int parse_pid(std::string_view digits) {
  if (digits.empty() || digits.size() > 9) return 0;
  int pid = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return 0;
    pid = pid * 10 + (c - '0');
  }
  return pid;
}

// The file name of an executable, without the " (deleted)" the kernel
// appends once the binary was replaced (a rebuild while the server runs).
std::string exe_name(const fs::path& link) {
  std::error_code ec;
  auto target = fs::read_symlink(link, ec);
  if (ec) return {};
  auto name = target.filename().string();
  constexpr std::string_view kDeleted = " (deleted)";
  if (name.size() > kDeleted.size() && name.ends_with(kDeleted))
    name.resize(name.size() - kDeleted.size());
  return name;
}

// argv[0]'s file name, for when /proc/PID/exe cannot be read.
std::string argv0_name(int pid) {
  auto cmdline = read_small_file("/proc/" + std::to_string(pid) + "/cmdline");
  auto argv0 = cmdline.substr(0, cmdline.find('\0'));
  return fs::path(argv0).filename().string();
}

// agentty itself, or whatever this binary is called (a renamed build; the
// tests, which publish their own pid).
bool agentty_name(const std::string& name) {
  static const std::string own = exe_name("/proc/self/exe");
  return !name.empty() && (name == "agentty" || name == own);
}

}  // namespace

ServerInfo ServerInfo::self(std::string kind, std::string dashboard_url, std::uint16_t port) {
  ServerInfo info;
  info.pid = static_cast<int>(::getpid());
  info.kind = std::move(kind);
  info.started_at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  info.dashboard_url = std::move(dashboard_url);
  info.port = port;
  info.process_start = ServerDirectory::process_start_of(info.pid);
  return info;
}

nlohmann::json ServerInfo::to_json() const {
  return {{"pid", pid},
          {"kind", kind},
          {"started_at", started_at_ms},
          {"dashboard_url", dashboard_url},
          {"port", port},
          {"process_start", process_start}};
}

Expected<ServerInfo> ServerInfo::from_json(const nlohmann::json& j) {
  try {
    ServerInfo info;
    info.pid = j.at("pid").get<int>();
    info.kind = j.at("kind").get<std::string>();
    info.started_at_ms = j.at("started_at").get<std::int64_t>();
    info.dashboard_url = j.at("dashboard_url").get<std::string>();
    info.port = j.at("port").get<std::uint16_t>();
    info.process_start = j.at("process_start").get<std::uint64_t>();
    return info;
  } catch (const nlohmann::json::exception& e) {
    return make_error(std::string("server entry: ") + e.what());
  }
}

std::uint64_t ServerDirectory::process_start_of(int pid) {
  auto stat = read_proc_stat(pid);
  if (!stat || stat->state == 'Z' || stat->state == 'X') return 0;
  return stat->start_time;
}

bool ServerDirectory::live_agentty(int pid, std::uint64_t process_start) {
  if (pid <= 0 || process_start == 0 || process_start_of(pid) != process_start) return false;
  auto name = exe_name("/proc/" + std::to_string(pid) + "/exe");
  return agentty_name(name.empty() ? argv0_name(pid) : name);
}

Expected<void> ServerDirectory::publish(const ServerInfo& info) const {
  if (auto made = ensure_private_dir(dir_); !made) return made;
  const auto name = std::to_string(info.pid) + std::string(kEntrySuffix);
  return write_private_file(dir_ / name, info.to_json().dump() + "\n",
                            dir_ / ("." + name + std::string(kTempSuffix)));
}

void ServerDirectory::remove(int pid) const {
  std::error_code ec;
  fs::remove(dir_ / (std::to_string(pid) + std::string(kEntrySuffix)), ec);
}

std::vector<ServerInfo> ServerDirectory::list() const {
  std::vector<ServerInfo> servers;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    auto name = it->path().filename().string();
    if (name.starts_with(".") && name.ends_with(kTempSuffix)) {
      // A writer's temp file: stale once its writer is gone.
      auto pid = parse_pid(std::string_view(name).substr(1, name.find('.', 1) - 1));
      if (pid > 0 && process_start_of(pid) == 0) fs::remove(it->path(), ec);
      ec.clear();
      continue;
    }
    if (!name.ends_with(kEntrySuffix)) continue;
    auto pid = parse_pid(std::string_view(name).substr(0, name.size() - kEntrySuffix.size()));
    if (pid == 0) continue;
    auto parsed = nlohmann::json::parse(read_small_file(it->path()), nullptr, false);
    auto info = parsed.is_discarded() ? Expected<ServerInfo>(make_error("unreadable"))
                                      : ServerInfo::from_json(parsed);
    bool live = info && info->pid == pid && live_agentty(pid, info->process_start);
    if (live) {
      servers.push_back(std::move(info).value());
    } else if (info || process_start_of(pid) == 0) {
      // A readable entry that fails the check, or any file of a gone pid (an
      // unreadable file of a live pid may be another version's: left alone).
      fs::remove(it->path(), ec);
      ec.clear();
    }
  }
  std::sort(servers.begin(), servers.end(), [](const ServerInfo& a, const ServerInfo& b) {
    return a.started_at_ms != b.started_at_ms ? a.started_at_ms < b.started_at_ms : a.pid < b.pid;
  });
  return servers;
}

nlohmann::json ServerDirectory::list_json() const {
  auto self = static_cast<int>(::getpid());
  auto servers = nlohmann::json::array();
  for (const auto& info : list()) {
    servers.push_back({{"pid", info.pid},
                       {"kind", info.kind},
                       {"started_at", info.started_at_ms},
                       {"port", info.port},
                       {"dashboard_url", info.dashboard_url},
                       {"self", info.pid == self}});
  }
  return {{"servers", servers}};
}

Expected<std::unique_ptr<ServerRegistration>> ServerRegistration::publish(ServerDirectory directory,
                                                                          ServerInfo info) {
  if (auto published = directory.publish(info); !published) return make_error(published.error());
  return std::unique_ptr<ServerRegistration>(
      new ServerRegistration(std::move(directory), info.pid));
}

void ServerRegistration::withdraw() {
  if (withdrawn_) return;
  withdrawn_ = true;
  directory_.remove(pid_);
}

}  // namespace agentty::web
