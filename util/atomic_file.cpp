#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>

#include "util/error.hpp"

namespace scalebench::util {
namespace {

std::string hex8(unsigned value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(8, '0');
  for (int i = 7; i >= 0; --i, value >>= 4) out[static_cast<std::size_t>(i)] = kDigits[value & 15];
  return out;
}

}  // namespace

void write_file_atomically(const std::filesystem::path& target, std::string_view content,
                           unsigned mode) {
  const std::string name = target.string();
  struct stat st {};
  if (::lstat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw Error(name + ": refusing to write there: it is " +
                (S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file"));
  const std::filesystem::path parent = target.parent_path().empty() ? "." : target.parent_path();
  std::random_device entropy;
  std::filesystem::path temp;
  int fd = -1;
  // O_EXCL fails on any existing name, a symlink included; O_NOFOLLOW says so twice.
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp = parent / ("." + target.filename().string() + "." + hex8(entropy()) + ".tmp");
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && errno != EEXIST)
      throw Error(name + ": cannot create a file in " + parent.string() + ": " +
                  std::strerror(errno));
  }
  if (fd < 0) throw Error(name + ": cannot create a temporary file beside it");
  const auto give_up = [&](const char* what) {
    const std::string reason = std::strerror(errno);
    ::close(fd);
    ::unlink(temp.c_str());
    throw Error(name + ": " + what + ": " + reason);
  };
  for (std::size_t written = 0; written < content.size();) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) give_up("cannot write");
    written += static_cast<std::size_t>(n);
  }
  if (mode != 0666 && ::fchmod(fd, mode) != 0) give_up("cannot set its mode");
  if (::close(fd) != 0) {
    fd = -1;
    const std::string reason = std::strerror(errno);
    ::unlink(temp.c_str());
    throw Error(name + ": cannot write: " + reason);
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temp.c_str());
    throw Error(name + ": cannot replace: " + reason);
  }
}

}  // namespace scalebench::util
