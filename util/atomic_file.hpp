// Replacing a file whole without following what someone planted at its name: the one writer of
// the report's files and of `cluster up`'s (docs/report.md, "Where the files go").
#pragma once

#include <filesystem>
#include <string_view>

namespace scalebench::util {

// Writes `content` to a new file created beside `target` (O_CREAT|O_EXCL|O_NOFOLLOW, a random
// name: nothing planted there is opened), gives it `mode`, and renames it over `target`: a reader
// never sees half a file. A symlink (never followed, never replaced), directory or other
// non-regular file at `target` is refused. With mode 0666 the umask applies as for any new file;
// otherwise the file gets exactly `mode`. Throws scalebench::Error naming `target`.
void write_file_atomically(const std::filesystem::path& target, std::string_view content,
                           unsigned mode = 0666);

}  // namespace scalebench::util
