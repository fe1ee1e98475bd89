// Helpers shared by the test suites: temporary directories and paths to built programs.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace scalebench::test {

// Skipping a test case that needs something absent (a GPU, mpirun, gnuplot): report_skip prints
// "SKIPPED: <test case>: <reason>", which ctest's SKIP_REGULAR_EXPRESSION reports as skipped
// (tests/CMakeLists.txt), and the macros return from the test case, so that a test binary run
// directly goes on with its other cases and lists the skipped ones at the end (test_main.cpp).
void report_skip(const std::string& reason);
#define SCALEBENCH_SKIP(reason)              \
  do {                                       \
    ::scalebench::test::report_skip(reason); \
    return;                                  \
  } while (false)
// `why` is a std::optional<std::string>: skips with it when it holds a reason.
#define SCALEBENCH_SKIP_IF(why)                          \
  do {                                                   \
    if (const auto skip_reason_ = (why); skip_reason_) { \
      ::scalebench::test::report_skip(*skip_reason_);    \
      return;                                            \
    }                                                    \
  } while (false)

// Whether `text` holds a raw byte that could steer a terminal: a C0 control other than newline,
// DEL, or the UTF-8 form of the C1 CSI (U+009B).
inline bool has_raw_control(const std::string& text) {
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n') || u == 0x7F) return true;
  }
  return text.find("\xC2\x9B") != std::string::npos;
}

// The text of a /proc file, or what was read before its process vanished: read(2) fails with
// ESRCH then, which std::ifstream would turn into an exception (seen on CI under load).
inline std::string read_proc_text(const std::filesystem::path& path) {
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[4096];
  for (;;) {
    const auto got = ::read(fd, buffer, sizeof buffer);
    if (got <= 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fd);
  return text;
}

// How many times `what` occurs in `text` (overlapping occurrences counted).
inline std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

inline std::filesystem::path source_dir() { return SCALEBENCH_SOURCE_DIR; }
inline std::filesystem::path binary_dir() { return SCALEBENCH_BINARY_DIR; }
inline std::filesystem::path data_dir() { return SCALEBENCH_TEST_DATA_DIR; }

// A fresh directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "scalebench-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace scalebench::test
