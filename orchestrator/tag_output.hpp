// What `scalebench-tag` writes (docs/launchers.md, "The torchrun launcher"): a worker's output
// chunks with Open MPI 4's `--tag-output` prefix, so that a launcher which cannot tag without
// polling a log file (torchrun) passes every rank's stdout and stderr on at once, told apart.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/line_parser.hpp"

namespace scalebench::orchestrator {

// The largest write that a pipe keeps whole when several writers share it (POSIX PIPE_BUF on
// Linux): every write of the wrapper fits, and begins with a tag.
inline constexpr std::size_t kAtomicWriteBytes = 4096;

// The writes for one chunk a rank's stream produced: `[1,RANK]<stdout>:` (or `<stderr>`) before
// the chunk and after each newline inside it that more text follows, as Open MPI does, cut so
// that each write holds at most kAtomicWriteBytes and starts with a tag (a longer line goes out
// as chunks of one rank, which the reader joins). An empty chunk gives no write.
std::vector<std::string> tagged_writes(int rank, Stream stream, std::string_view chunk);

}  // namespace scalebench::orchestrator
