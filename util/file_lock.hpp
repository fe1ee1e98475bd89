// An advisory lock on a file that the kernel releases when its holder dies (even by kill -9):
// one process at a time does something, and the others learn who does.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace scalebench::util {

// An exclusive flock(2) on `path`, with a one-line description of the holder (pid, host, since)
// written into the file for those that find it taken. The descriptor is close-on-exec, so no
// program the holder starts keeps the lock after it; the file is removed when the lock is given
// back (a holder killed leaves the file, unlocked: the next one takes it). On NFS, Linux emulates
// flock with fcntl locks, which the server keeps across hosts.
class FileLock {
 public:
  // The lock, or nothing when another process holds it: then `*held_by` (if given) gets the
  // holder's description as it wrote it (printable ASCII, at most 300 characters; empty if the
  // holder had not written it yet). Throws scalebench::Error when the file cannot be opened.
  static std::optional<FileLock> try_acquire(const std::filesystem::path& path,
                                             const std::string& holder, std::string* held_by);
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();
  const std::filesystem::path& path() const { return path_; }

 private:
  FileLock(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  void release() noexcept;
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace scalebench::util
