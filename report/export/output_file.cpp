#include "report/export/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <utility>

#include "report/analysis/report.hpp"
#include "util/atomic_file.hpp"

namespace scalebench::report {
namespace {

namespace fs = std::filesystem;

std::string errno_text() { return std::strerror(errno); }

// A file descriptor closed on every path out.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// What lstat found at a path, in words, for what the rule refuses.
const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// True when the regular file at `path` begins with SQLite's 16-byte header.
bool is_sqlite_database(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  Fd file(fd);
  char header[16] = {};
  ssize_t n = 0;
  do {
    n = ::read(file.get(), header, sizeof header);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof header) &&
         std::memcmp(header, "SQLite format 3\0", sizeof header) == 0;
}

}  // namespace

void check_output_target(const fs::path& target) {
  struct stat st {};
  if (::lstat(target.c_str(), &st) != 0) {
    if (errno == ENOENT) return;  // absent: created
    throw ReportError(
        fmt::format("{}: cannot check the output path: {}", target.string(), errno_text()));
  }
  if (S_ISLNK(st.st_mode)) {
    std::error_code error;
    const fs::path to = fs::read_symlink(target, error);
    throw ReportError(fmt::format(
        "{}: refusing to write there: it is a symbolic link{}; scalebench neither follows nor "
        "replaces links: give the real path{}",
        target.string(), error ? std::string() : " to " + to.string(),
        target == "/dev/stdout" ? " (or leave out -o to write to standard output)" : ""));
  }
  if (!S_ISREG(st.st_mode)) {
    throw ReportError(
        fmt::format("{}: refusing to write there: it is {}, not a regular file; choose a file path",
                    target.string(), kind_of(st.st_mode)));
  }
  if (is_sqlite_database(target)) {
    throw ReportError(fmt::format(
        "{}: refusing to write there: it is a SQLite database; choose another output path",
        target.string()));
  }
  const std::string name = target.string();
  for (const std::string_view suffix : {"-wal", "-shm", "-journal"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix) &&
        is_sqlite_database(name.substr(0, name.size() - suffix.size()))) {
      throw ReportError(
          fmt::format("{}: refusing to write there: it is the {} file of the SQLite database {}",
                      target.string(), suffix, name.substr(0, name.size() - suffix.size())));
    }
  }
}

std::string safe_file_name(std::string_view name) {
  std::string out;
  for (const char c : name.substr(0, kMaxFileNameStem)) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    out += keep ? c : '_';
  }
  if (out.empty()) return "unnamed";
  if (out.front() == '.') out.front() = '_';
  return out;
}

void write_file_replacing(const fs::path& target, std::string_view content) {
  check_output_target(target);
  try {
    util::write_file_atomically(target, content);
  } catch (const Error& error) {
    throw ReportError(error.what());
  }
}

void replace_file(const fs::path& from, const fs::path& to) {
  check_output_target(to);
  if (::rename(from.c_str(), to.c_str()) != 0) {
    throw ReportError(
        fmt::format("{}: cannot replace it with {}: {}", to.string(), from.string(), errno_text()));
  }
}

void refuse_database_output(const fs::path& output, const fs::path& database) {
  std::error_code error;
  const fs::path out_resolved = fs::weakly_canonical(fs::absolute(output, error), error);
  struct stat out_stat {};
  const bool out_exists = ::stat(output.c_str(), &out_stat) == 0;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    fs::path file = database;
    file += suffix;
    std::error_code ignored;
    const fs::path resolved = fs::weakly_canonical(fs::absolute(file, ignored), ignored);
    struct stat file_stat {};
    const bool same_inode = out_exists && ::stat(file.c_str(), &file_stat) == 0 &&
                            file_stat.st_dev == out_stat.st_dev &&
                            file_stat.st_ino == out_stat.st_ino;
    if (same_inode || (!error && !ignored && resolved == out_resolved)) {
      throw ReportError(fmt::format(
          "{}: refusing to write there: it is the results database {}{}; choose another output "
          "path",
          output.string(), database.string(),
          *suffix != '\0' ? fmt::format(" (its {} file)", suffix) : std::string()));
    }
  }
}

namespace {

// Whether `pid` runs: a zombie does not (a killed process waits as one until its parent, or
// an init that reaps slowly, collects it).
bool process_lives(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const auto paren = text.rfind(')');
  return !(paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z');
}

// `.scalebench-<pid>-XXXXXX` directories of this user in `parent` whose process is gone: left by
// a kill -9 (merge's private copy of a side file is as large as the file). A pid reused by a
// live process keeps its directory until that one ends too.
void remove_orphaned_temp_dirs(const fs::path& parent) {
  std::error_code error;
  for (fs::directory_iterator it(parent, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    constexpr std::string_view kPrefix = ".scalebench-";
    if (!name.starts_with(kPrefix)) continue;
    const auto dash = name.find('-', kPrefix.size());
    if (dash == std::string::npos || dash == kPrefix.size()) continue;
    const std::string digits = name.substr(kPrefix.size(), dash - kPrefix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid())
      continue;
    if (pid == ::getpid() || process_lives(pid)) continue;
    std::error_code ignored;
    fs::remove_all(it->path(), ignored);
  }
}

}  // namespace

PrivateTempDir::PrivateTempDir(const fs::path& parent) {
  remove_orphaned_temp_dirs(parent);
  std::string pattern = (parent / fmt::format(".scalebench-{}-XXXXXX", ::getpid())).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw ReportError(fmt::format("cannot create a temporary directory in {}: {}", parent.string(),
                                  errno_text()));
  }
  path_ = pattern;
}

PrivateTempDir::~PrivateTempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

}  // namespace scalebench::report
