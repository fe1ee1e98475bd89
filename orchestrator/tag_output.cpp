#include "orchestrator/tag_output.hpp"

#include <fmt/format.h>

namespace scalebench::orchestrator {

std::vector<std::string> tagged_writes(int rank, Stream stream, std::string_view chunk) {
  const std::string tag =
      fmt::format("[1,{}]<{}>:", rank, stream == Stream::Stderr ? "stderr" : "stdout");
  const std::size_t room = kAtomicWriteBytes - tag.size();
  std::vector<std::string> writes;
  std::string current;
  while (!chunk.empty()) {
    // One line's piece: up to and with its newline, at most `room` bytes.
    const auto newline = chunk.find('\n');
    std::size_t take = newline == std::string_view::npos ? chunk.size() : newline + 1;
    take = std::min(take, room);
    if (current.size() + tag.size() + take > kAtomicWriteBytes) {
      writes.push_back(std::move(current));
      current.clear();
    }
    current += tag;
    current.append(chunk.substr(0, take));
    chunk.remove_prefix(take);
  }
  if (!current.empty()) writes.push_back(std::move(current));
  return writes;
}

}  // namespace scalebench::orchestrator
