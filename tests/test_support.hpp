// Helpers shared by the test suites: temporary directories and paths to built programs.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace scalebench::test {

// ctest's SKIP_RETURN_CODE for every suite (tests/CMakeLists.txt).
inline constexpr int kSkipReturnCode = 77;

inline std::filesystem::path source_dir() { return SCALEBENCH_SOURCE_DIR; }
inline std::filesystem::path binary_dir() { return SCALEBENCH_BINARY_DIR; }
inline std::filesystem::path data_dir() { return SCALEBENCH_TEST_DATA_DIR; }

// A fresh directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "scalebench-test-XXXXXX").string();
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
