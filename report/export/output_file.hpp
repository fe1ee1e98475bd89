// Writing the report's and the figure's files safely: names from the database made into file
// names, no write through a symlink someone planted at a fixed name, never over the database.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace scalebench::report {

inline constexpr std::size_t kMaxFileNameStem = 100;

// `name` (an experiment or condition name from the database) as one path component: bytes
// outside [A-Za-z0-9._-] become '_', a leading '.' becomes '_' (no hidden files, no "..", no
// "."), an empty name becomes "unnamed", and it is cut to kMaxFileNameStem bytes.
std::string safe_file_name(std::string_view name);

// The one rule for every file a command writes (docs/report.md, "Where the files go"): `target`
// must be absent or a regular file that is not a SQLite database (nor the -wal, -shm or -journal
// file of one). A symbolic link is refused, never followed and never replaced (`-o /dev/stdout`
// would otherwise replace the system's link); so are directories, devices, FIFOs and sockets.
// Throws ReportError naming the path and what is there.
void check_output_target(const std::filesystem::path& target);

// Writes `content` to a new file created beside `target` (O_CREAT|O_EXCL|O_NOFOLLOW), then
// renames it over `target` (checked by check_output_target first): a reader never sees half a
// file. Throws ReportError naming `target`.
void write_file_replacing(const std::filesystem::path& target, std::string_view content);

// Renames `from` over `to` (same filesystem), `to` checked by check_output_target first.
void replace_file(const std::filesystem::path& from, const std::filesystem::path& to);

// Throws ReportError when writing `output` would overwrite the SQLite database at `database`:
// the same path once resolved (symlinks, "..", relative), the same file by device and inode
// (hard links), or one of its -wal, -shm or -journal files.
void refuse_database_output(const std::filesystem::path& output,
                            const std::filesystem::path& database);

// A new private directory (mkdtemp, mode 0700) `.scalebench-<pid>-XXXXXX` inside `parent`,
// removed with its contents when the object dies. Only this process creates files in it, so
// nothing in it can be planted. Such directories of this user whose process is gone (a kill -9)
// are removed when the next one is made in the same parent.
class PrivateTempDir {
 public:
  explicit PrivateTempDir(const std::filesystem::path& parent);
  ~PrivateTempDir();
  PrivateTempDir(const PrivateTempDir&) = delete;
  PrivateTempDir& operator=(const PrivateTempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace scalebench::report
