#include "session/output_log.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include <spdlog/spdlog.h>

#include "base/errno_message.hpp"
#include "base/fd_io.hpp"
#include "base/private_dir.hpp"
#include "base/utf8.hpp"
#include "session/text_view.hpp"

namespace agentty::session {
namespace {

constexpr std::size_t kMinRamBytes = 4096;
constexpr std::size_t kSpoolBatchBytes = 256 << 10;
// A page looks at twice its cap (plus slack): the byte after the cap, and
// whether the line it cuts overwrites itself further on.
constexpr std::size_t kPageSlackBytes = 16;
constexpr std::size_t kTailScanBlock = 64 << 10;  // backward LF search step
constexpr std::size_t kResyncLookBack = 256;      // how far back a cut looks for an ESC

}  // namespace

// Ring: seq s lives at ring[(s - 1) % capacity] while s >= ram_first_seq.
// Spool: seq s lives at file offset (s - 1) % spool_cap while
// spool_first() <= s < spooled_seq. Invariant: ram_first_seq <= spooled_seq
// whenever the spool is active (nothing leaves RAM before it is on disk).
// The RAM ring's storage: anonymous pages, touched (and only then counted in
// RSS and in the page tables) as output arrives, and excluded from fork
// (MADV_DONTFORK): every spawn forks this process, and copying the page tables
// of every retained execution's ring made each spawn slower than the last.
class RingBuffer {
 public:
  RingBuffer() = default;
  RingBuffer(const RingBuffer&) = delete;
  RingBuffer& operator=(const RingBuffer&) = delete;
  ~RingBuffer() {
    if (data_) ::munmap(data_, size_);
  }
  void allocate(std::size_t size) {
    void* memory =
        ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) throw std::bad_alloc();
    ::madvise(memory, size, MADV_DONTFORK);
    data_ = static_cast<char*>(memory);
    size_ = size;
  }
  // Gives the touched pages back (they read as zeros if touched again).
  void release() {
    if (data_) ::madvise(data_, size_, MADV_DONTNEED);
  }
  char* data() { return data_; }
  const char* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
};

struct OutputLog::Impl {
  RingBuffer ring;
  std::uint64_t ram_first_seq = 1;
  std::size_t batch_bytes = kSpoolBatchBytes;
  // The spool file is made when the first batch goes out: most executions
  // print less than a batch and never need one (a create and an unlink
  // saved per execute).
  std::filesystem::path spool_path;
  bool spool_enabled = false;  // configured, and not dropped (error, freeze)
  UniqueFd spool_fd;
  bool spool_created = false;
  // After release_ram the file is closed (a retained record held an fd
  // each) and each read opens it again.
  bool spool_closed = false;
  std::uint64_t spool_cap = 0;
  std::uint64_t spooled_seq = 1;
  // The last byte each store overwrote: the one just before its first byte
  // (ram_first_seq, spool_first()); see retained_starts_a_line.
  char ram_before_first = 0;
  char spool_before_first = 0;
  std::string spool_error;
  mutable std::string read_error;  // see OutputLog::read_error
  std::uint64_t frozen_at = 0;     // latest_seq at freeze_spool()

  // Bytes may go to the spool (its file may not exist yet).
  bool spool_active() const { return spool_enabled; }

  // The log goes on with its RAM ring alone. The file is removed: reads no
  // longer use it, and on a full disk its blocks are better given back. Said
  // once in the server's log; the tools show spool_error to the agent.
  void drop_spool(const std::string& cause) {
    spool_error = "cannot write the spool file " + spool_path.string() + ": " + cause;
    spool_enabled = false;
    spool_fd.reset();
    if (spool_created) ::unlink(spool_path.c_str());
    spool_created = false;
    spdlog::error(
        "{}; output older than the newest {} bytes of this execution is lost. Free "
        "space there or make it writable, or restart agentty with another --state-dir",
        spool_error, ring.size());
  }

  int open_new_spool() const {
    return ::open(spool_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  }

  bool ensure_spool_file() {
    if (spool_fd.valid()) return true;
    // A stale spool from a crashed run is ours to replace; O_EXCL then makes
    // sure we do not follow a link planted in its place.
    ::unlink(spool_path.c_str());
    int fd = open_new_spool();
    const int open_errno = errno;
    std::string error = fd < 0 ? errno_message("open") : std::string();
    // The directory went while the server ran (a state dir removed by hand):
    // made again, as at start-up, rather than losing every long output; or
    // it is not one (a link to a file): ensure_private_dir says what it is.
    // Only then: an existing directory is the caller's (the Registry made
    // STATE_DIR/spool private at start-up; a test may spool into /tmp).
    if (fd < 0 && (open_errno == ENOENT || open_errno == ENOTDIR)) {
      if (auto made = ensure_private_dir(spool_path.parent_path()); !made) {
        error = made.error();
      } else if (fd = open_new_spool(); fd < 0) {
        error = errno_message("open");
      }
    }
    if (fd < 0) {
      drop_spool(error);
      return false;
    }
    spool_fd.reset(fd);
    spool_created = true;
    return true;
  }
  std::uint64_t spool_first() const {
    return spooled_seq > spool_cap ? spooled_seq - spool_cap : 1;
  }

  void write_spool(std::uint64_t seq, const char* data, std::size_t size) {
    while (size > 0 && spool_active() && ensure_spool_file()) {
      const std::uint64_t offset = (seq - 1) % spool_cap;
      const std::size_t chunk =
          static_cast<std::size_t>(std::min<std::uint64_t>(size, spool_cap - offset));
      // The chunk's last byte replaces the one that will sit just before
      // spool_first(); it is still in the file.
      const std::uint64_t end = seq + chunk;
      if (end - 1 > spool_cap &&
          pread_all(spool_fd.get(), &spool_before_first, 1,
                    static_cast<off_t>((end - spool_cap - 2) % spool_cap)) != 1) {
        drop_spool(errno_message("pread"));
        return;
      }
      if (auto written =
              pwrite_all(spool_fd.get(), std::string_view(data, chunk), static_cast<off_t>(offset));
          !written) {
        drop_spool(written.error());
        return;
      }
      seq += chunk;
      data += chunk;
      size -= chunk;
      spooled_seq = seq;
    }
  }

  void flush_ring(std::uint64_t latest_seq) {
    while (spool_active() && spooled_seq < latest_seq) {
      const std::size_t at = static_cast<std::size_t>((spooled_seq - 1) % ring.size());
      const std::size_t chunk = static_cast<std::size_t>(
          std::min<std::uint64_t>(latest_seq - spooled_seq, ring.size() - at));
      write_spool(spooled_seq, ring.data() + at, chunk);
    }
  }

  void copy_from_ring(std::uint64_t seq, char* out, std::size_t size) const {
    while (size > 0) {
      const std::size_t at = static_cast<std::size_t>((seq - 1) % ring.size());
      const std::size_t chunk = std::min(size, ring.size() - at);
      std::memcpy(out, ring.data() + at, chunk);
      out += chunk;
      seq += chunk;
      size -= chunk;
    }
  }

  bool copy_from_spool(std::uint64_t seq, char* out, std::size_t size) const {
    UniqueFd reopened;
    if (spool_closed) reopened.reset(::open(spool_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    const int fd = spool_closed ? reopened.get() : spool_fd.get();
    // An ended record's spool is opened per read: out of fds, that fails,
    // and an empty copy would pass for no output (explore cached it so).
    const auto failed = [this](const char* syscall) {
      read_error =
          "cannot read the spool file " + spool_path.string() + ": " + errno_message(syscall);
      return false;
    };
    if (fd < 0) return failed("open");
    while (size > 0) {
      const std::uint64_t offset = (seq - 1) % spool_cap;
      const std::size_t chunk =
          static_cast<std::size_t>(std::min<std::uint64_t>(size, spool_cap - offset));
      if (pread_all(fd, out, chunk, static_cast<off_t>(offset)) != chunk) return failed("pread");
      out += chunk;
      seq += chunk;
      size -= chunk;
    }
    return true;
  }
};

OutputLog::OutputLog(OutputLogOptions options) : options_(std::move(options)), impl_(new Impl) {
  impl_->ring.allocate(std::max(options_.ram_bytes, kMinRamBytes));
  impl_->batch_bytes = std::min(kSpoolBatchBytes, impl_->ring.size() / 2);
  if (options_.spool_cap_bytes == 0 || options_.spool_path.empty()) return;
  impl_->spool_path = options_.spool_path;
  impl_->spool_enabled = true;
  impl_->spool_cap = options_.spool_cap_bytes;
}

OutputLog::~OutputLog() {
  if (impl_->spool_created) ::unlink(options_.spool_path.c_str());
  delete impl_;
}

const std::string& OutputLog::spool_error() const {
  return impl_->spool_error;
}

const std::string& OutputLog::read_error() const {
  return impl_->read_error;
}

void OutputLog::append(std::string_view bytes) {
  if (bytes.empty()) return;
  Impl& impl = *impl_;
  const std::size_t capacity = impl.ring.size();
  if (impl.spool_active() && latest_seq_ - impl.spooled_seq + bytes.size() > capacity) {
    impl.flush_ring(latest_seq_);  // the ring is about to overwrite unflushed bytes
  }
  if (impl.spool_active() && bytes.size() > capacity) {
    impl.write_spool(latest_seq_, bytes.data(), bytes.size());
  }
  // Only the newest `capacity` bytes can stay in RAM.
  const std::size_t skip = bytes.size() > capacity ? bytes.size() - capacity : 0;
  const std::uint64_t end = latest_seq_ + bytes.size();
  if (end - 1 > capacity) {  // keep the byte that will sit just before ram_first_seq
    const std::uint64_t before_first = end - capacity - 1;
    impl.ram_before_first = before_first >= latest_seq_
                                ? bytes[before_first - latest_seq_]
                                : impl.ring.data()[(before_first - 1) % capacity];
  }
  std::uint64_t seq = latest_seq_ + skip;
  std::string_view rest = bytes.substr(skip);
  while (!rest.empty()) {
    const std::size_t at = static_cast<std::size_t>((seq - 1) % capacity);
    const std::size_t chunk = std::min(rest.size(), capacity - at);
    std::memcpy(impl.ring.data() + at, rest.data(), chunk);
    rest.remove_prefix(chunk);
    seq += chunk;
  }
  latest_seq_ += bytes.size();
  if (latest_seq_ - 1 > capacity) impl.ram_first_seq = latest_seq_ - capacity;
  if (!impl.spool_active()) return;
  if (impl.spooled_seq > latest_seq_) impl.spooled_seq = latest_seq_;  // large direct write done
  if (latest_seq_ - impl.spooled_seq >= impl.batch_bytes) impl.flush_ring(latest_seq_);
}

void OutputLog::flush() {
  // Without a file every byte is still in RAM: nothing to make safe.
  if (impl_->spool_fd.valid()) impl_->flush_ring(latest_seq_);
}

void OutputLog::freeze_spool() {
  Impl& impl = *impl_;
  if (impl.frozen_at != 0 || impl.spool_closed) return;  // closed: complete, nothing grows
  impl.frozen_at = latest_seq_;
  if (!impl.spool_active()) return;
  if (!impl.spool_fd.valid()) {  // nothing ever left RAM: no file needed
    impl.spool_enabled = false;
    return;
  }
  impl.flush_ring(latest_seq_);
  const std::uint64_t spooled = impl.spooled_seq - 1;
  if (spooled <= impl.ring.size()) {  // RAM holds it all: no file needed
    [[maybe_unused]] const int ignored =
        ::ftruncate(impl.spool_fd.get(), 0);  // removed later anyway
    impl.spool_fd.reset();
    impl.spool_enabled = false;
    return;
  }
  // Not wrapped yet, so every spooled byte's offset (s - 1) % cap stays put.
  if (spooled < impl.spool_cap) impl.spool_cap = spooled;
}

void OutputLog::release_ram() {
  Impl& impl = *impl_;
  if (!complete_ || !impl.spool_fd.valid()) return;
  impl.flush_ring(latest_seq_);
  // Only when the spool holds every byte the ring does.
  if (!impl.spool_active() || impl.spooled_seq != latest_seq_ ||
      impl.spool_first() > impl.ram_first_seq)
    return;
  impl.ram_first_seq = latest_seq_;
  impl.ring.release();
  impl.spool_fd.reset();
  impl.spool_closed = true;
}

std::uint64_t OutputLog::spool_frozen_at() const {
  return impl_->frozen_at;
}

void OutputLog::mark_complete() {
  complete_ = true;
}

std::uint64_t OutputLog::first_retained_seq() const {
  if (!impl_->spool_active()) return impl_->ram_first_seq;
  return std::min(impl_->ram_first_seq, impl_->spool_first());
}

std::uint64_t OutputLog::retention_capacity() const {
  const std::uint64_t ram = impl_->ring.size();
  return impl_->spool_active() ? std::max(ram, impl_->spool_cap) : ram;
}

bool OutputLog::retained_starts_a_line() const {
  const std::uint64_t first = first_retained_seq();
  if (first == 1) return false;
  const bool from_spool = impl_->spool_active() && impl_->spool_first() <= impl_->ram_first_seq;
  return (from_spool ? impl_->spool_before_first : impl_->ram_before_first) == '\n';
}

std::string OutputLog::copy_range(std::uint64_t from, std::uint64_t to) const {
  std::string out;
  copy_range(from, to, out);
  return out;
}

void OutputLog::copy_range(std::uint64_t from, std::uint64_t to, std::string& out) const {
  out.clear();
  impl_->read_error.clear();
  from = std::max(from, first_retained_seq());
  to = std::min(to, latest_seq_);
  if (from >= to) return;
  out.resize(static_cast<std::size_t>(to - from));
  const std::uint64_t ram_from = std::clamp(impl_->ram_first_seq, from, to);
  if (from < ram_from) {
    const std::size_t from_spool = static_cast<std::size_t>(ram_from - from);
    if (!impl_->copy_from_spool(from, out.data(), from_spool)) {
      out.clear();
      return;
    }
  }
  if (ram_from < to) {
    impl_->copy_from_ring(ram_from, out.data() + (ram_from - from),
                          static_cast<std::size_t>(to - ram_from));
  }
}

LogPage OutputLog::read(std::uint64_t since_seq, std::size_t max_bytes) const {
  LogPage page;
  const std::uint64_t first = first_retained_seq();
  if (since_seq < first) {
    since_seq = first;
    page.evicted = true;
  }
  page.start_seq = page.next_seq = std::min(since_seq, latest_seq_);
  if (since_seq >= latest_seq_) return page;
  max_bytes = std::clamp<std::size_t>(max_bytes, 1, std::size_t{1} << 40);
  const std::uint64_t available = latest_seq_ - since_seq;
  std::uint64_t window =
      std::min<std::uint64_t>(available, 2 * std::uint64_t{max_bytes} + kPageSlackBytes);
  std::size_t length = 0;
  for (;;) {
    page.bytes = copy_range(since_seq, since_seq + window);
    if (!impl_->read_error.empty()) {
      page.read_error = impl_->read_error;
      return page;  // nothing returned: the cursor stays, to read again
    }
    const bool more = window < available || !complete_;
    length = safe_page_length(page.bytes, max_bytes, more);
    // A unit longer than the window: widen until it is whole.
    if (length > 0 || window >= available) break;
    window = std::min<std::uint64_t>(available, window * 2);
  }
  if (window < available) {
    page.capped = length > 0;
  } else {
    page.capped =
        length < safe_page_length(page.bytes, std::numeric_limits<std::size_t>::max(), !complete_);
  }
  page.bytes.resize(length);
  page.next_seq = since_seq + length;
  return page;
}

namespace {

// Moves a cut made at an arbitrary position forward to a unit boundary:
// past an escape sequence it fell into, UTF-8 continuation bytes, and the LF
// of a CR LF pair. Heuristic: a position cannot be classified exactly
// without parsing from the start of the log.
std::uint64_t resync(const OutputLog& log, std::uint64_t cut) {
  const std::uint64_t from =
      std::max(log.first_retained_seq(), cut > kResyncLookBack ? cut - kResyncLookBack : 1);
  const std::string before = log.copy_range(from, cut);
  const std::size_t esc = before.rfind('\x1b');
  if (esc != std::string::npos) {
    const std::uint64_t esc_seq = from + esc;
    const std::string unit = log.copy_range(esc_seq, esc_seq + kMaxSequenceBytes);
    cut = std::max(cut, esc_seq + unit_length(unit));
  }
  const std::string after = log.copy_range(cut, cut + 4);
  std::size_t skip = utf8_next_char_start(after, 0);
  if (skip == 0 && !after.empty() && after[0] == '\n' && !before.empty() && before.back() == '\r') {
    skip = 1;
  }
  return cut + skip;
}

}  // namespace

LogPage OutputLog::tail_lines(std::size_t lines, std::size_t max_bytes) const {
  LogPage page;
  const std::uint64_t first = first_retained_seq();
  page.start_seq = page.next_seq = latest_seq_;
  if (lines == 0 || first >= latest_seq_) return page;
  const std::uint64_t bound = latest_seq_ - first > max_bytes ? latest_seq_ - max_bytes : first;
  // Search backward for the LF that ends the line before the wanted ones. A
  // LF as the very last byte ends the newest line, it does not separate.
  std::uint64_t end = latest_seq_;
  if (copy_range(end - 1, end) == "\n") --end;
  std::size_t found = 0;
  std::uint64_t start = 0;
  while (end > bound && start == 0) {
    const std::uint64_t from = std::max(bound, end > kTailScanBlock ? end - kTailScanBlock : 1);
    const std::string block = copy_range(from, end);
    for (std::size_t i = block.size(); i-- > 0;) {
      if (block[i] == '\n' && ++found == lines) {
        start = from + i + 1;
        break;
      }
    }
    end = from;
  }
  if (start == 0) {
    start = bound;
    page.capped = bound > first;
    page.evicted = bound == first && first > 1;
    if (start > 1) start = resync(*this, start);
  }
  page.bytes = copy_range(start, latest_seq_);
  page.read_error = impl_->read_error;
  const std::size_t length =
      safe_page_length(page.bytes, std::numeric_limits<std::size_t>::max(), !complete_);
  page.bytes.resize(length);
  page.start_seq = start;
  page.next_seq = start + length;
  return page;
}

}  // namespace agentty::session
