#include "util/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

#include "util/error.hpp"

namespace scalebench::util {
namespace {

// What the holder wrote, made one printable line.
std::string read_holder(int fd) {
  std::string text;
  char buffer[512];
  const ssize_t got = ::pread(fd, buffer, sizeof buffer, 0);
  for (ssize_t i = 0; i < got && text.size() < 300; ++i) {
    const char c = buffer[i];
    if (c == '\n') break;
    text += (c >= 0x20 && c < 0x7F) ? c : '?';
  }
  return text;
}

}  // namespace

std::optional<FileLock> FileLock::try_acquire(const std::filesystem::path& path,
                                              const std::string& holder, std::string* held_by) {
  // A holder giving the lock back removes the file while it still holds it: a file locked after
  // that is no longer the one at `path`, and the lock is tried again on the new one.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 && errno == ELOOP)
      throw Error("the lock file " + path.string() +
                  " is a symbolic link (planted there?); it is not followed: remove it");
    if (fd < 0)
      throw Error("cannot open the lock file " + path.string() + ": " + std::strerror(errno));
    // O_NOFOLLOW does not stop a hard link: a lock file with a second name is another file
    // (a user's, planted there) that the holder's line would truncate and overwrite.
    struct stat opened {};
    if (::fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode) || opened.st_nlink != 1) {
      const bool linked = S_ISREG(opened.st_mode) && opened.st_nlink > 1;
      ::close(fd);
      throw Error(linked ? "the lock file " + path.string() + " has " +
                               std::to_string(opened.st_nlink) +
                               " links (another file's name, planted there?); it is not "
                               "written: remove that name"
                         : "the lock file " + path.string() + " is not a regular file");
    }
    int result = 0;
    do result = ::flock(fd, LOCK_EX | LOCK_NB);
    while (result != 0 && errno == EINTR);
    if (result != 0) {
      const int error = errno;
      if (error != EWOULDBLOCK) {
        ::close(fd);
        throw Error("cannot lock " + path.string() + ": " + std::strerror(error));
      }
      // Taken: the holder writes its description right after locking; give it a moment.
      std::string text = read_holder(fd);
      for (int wait = 0; text.empty() && wait < 20; ++wait) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        text = read_holder(fd);
      }
      ::close(fd);
      if (held_by) *held_by = text;
      return std::nullopt;
    }
    struct stat locked {
    }, now{};
    if (::fstat(fd, &locked) != 0 || ::stat(path.c_str(), &now) != 0 ||
        locked.st_dev != now.st_dev || locked.st_ino != now.st_ino) {
      ::close(fd);  // removed (or replaced) between open and flock
      continue;
    }
    const std::string line = holder + "\n";
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size())) {
      const int error = errno;
      ::unlink(path.c_str());
      ::close(fd);
      throw Error("cannot write the lock file " + path.string() + ": " + std::strerror(error));
    }
    return FileLock(path, fd);
  }
  throw Error("cannot lock " + path.string() + ": it keeps being removed and created again");
}

FileLock::FileLock(FileLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FileLock::~FileLock() { release(); }

void FileLock::release() noexcept {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // still held: nobody has locked this file in between
  ::close(fd_);
  fd_ = -1;
}

}  // namespace scalebench::util
