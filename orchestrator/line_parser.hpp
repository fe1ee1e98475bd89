// Parsing one output line: the launcher's rank tag, and what the trainer said.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scalebench::orchestrator {

enum class Stream { Stdout, Stderr };
std::string_view stream_name(Stream stream);

// Which tag forms to recognise besides the bracketed ones that are always accepted.
struct TagOptions {
  // `N: text` as written by `srun --label` and MPICH's `mpiexec -l`. Off by default because an
  // untagged line such as "3: done" would be misread as rank 3.
  bool rank_colon_prefix = false;
};

struct TaggedLine {
  std::optional<int> rank;           // absent for untagged lines
  std::optional<Stream> tag_stream;  // the stream named inside the tag, if any
  std::string_view payload;          // the text after the tag
};

// Accepts `[1,0]<stdout>:x` (Open MPI 4), `[ns@1,0]<stdout>: x` (Open MPI 5, one space after the
// colon is dropped), `[0]<stdout>:x` (horovodrun, optionally after its 1-second timestamp) and
// untagged lines. Never throws: anything unrecognised is an untagged line.
TaggedLine parse_tagged_line(std::string_view line, const TagOptions& options = {});

struct EpochMarker {
  int epoch = 0;
  int total = 0;
};
// The payload without launcher tags inside it (`Epoch 2/3[1,0]<stdout>:` -> `Epoch 2/3`): Open
// MPI tags every chunk a rank writes, so a line written in two writes carries a second tag where
// the second write began. Only well-formed Open MPI tags ([job,rank]) are removed.
std::string remove_embedded_tags(std::string_view payload);

// `Epoch y/z` with 1 <= y <= z (surrounding whitespace allowed, nothing else).
std::optional<EpochMarker> parse_epoch_marker(std::string_view payload);

// The trainer's end-of-epoch line: `s/s - loss: 0.5 - accuracy: 0.8 - ... - epoch_seconds: 4.8`.
struct EpochEnd {
  std::optional<double> loss;
  std::optional<double> accuracy;
  std::optional<double> test_accuracy;
  std::optional<double> images_per_second;
  std::optional<double> epoch_seconds;
};
std::optional<EpochEnd> parse_epoch_end(std::string_view payload);

// `scalebench-train k=v ...` (header) and `Training done: k=v ...` (end of training).
struct KeyValueLine {
  std::vector<std::pair<std::string, std::string>> fields;
  std::optional<std::string> get(std::string_view key) const;
};
std::optional<KeyValueLine> parse_trainer_header(std::string_view payload);
std::optional<KeyValueLine> parse_training_done(std::string_view payload);

// The allreduce benchmark (`scalebench-train --benchmark allreduce`, docs/trainer-output.md).
// Its first line, `# scalebench-train benchmark=allreduce transport=mpi np=2 ...`: the header's
// key=value form behind a `#`, with a `benchmark` key.
std::optional<KeyValueLine> parse_benchmark_header(std::string_view payload);
// One row of its table: exactly eight fields separated by spaces or tabs,
// `size count type redop time algbw busbw #wrong`, e.g.
// `      1048576        262144   float     sum     123.456    8.4937    8.4937       0`.
// Sizes and counts are non-negative integers, type and redop words, times and bandwidths finite
// non-negative numbers. `#` lines and anything else are not rows.
struct AllreduceRow {
  long long bytes = 0;
  long long count = 0;
  std::string type;
  std::string redop;
  double time_us = 0;
  double algbw_gbs = 0;
  double busbw_gbs = 0;
  long long wrong = 0;
};
std::optional<AllreduceRow> parse_allreduce_row(std::string_view payload);
// Its last line, `# Avg bus bandwidth    : 8.4937` (nccl-tests' own words): the value.
std::optional<double> parse_average_bus_bandwidth(std::string_view payload);

// Replaces every invalid UTF-8 sequence by U+FFFD and drops a trailing '\r', so stored text is
// always valid UTF-8 whatever a process wrote.
std::string sanitize_utf8(std::string_view bytes);

// The longest line kept: the rest of a longer line is dropped and counted, so that one line of
// a gigabyte (a progress bar without newlines, a dumped tensor) cannot exhaust memory.
inline constexpr std::size_t kMaxLineBytes = 64 * 1024;

// Splits a byte stream into lines as chunks arrive; a line may span chunks. A line longer than
// max_line_bytes keeps its first max_line_bytes bytes and ends with
// " [scalebench: line cut: N more bytes not stored]".
class LineSplitter {
 public:
  LineSplitter() = default;
  explicit LineSplitter(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}
  // Appends the complete lines contained in `chunk` (without '\n') to `out`.
  void feed(std::string_view chunk, std::vector<std::string>& out);
  // The unterminated rest at end of stream, if any.
  std::optional<std::string> finish();

 private:
  void append(std::string_view part);
  std::string take();
  std::size_t max_line_bytes_ = kMaxLineBytes;
  std::string pending_;
  std::size_t dropped_ = 0;
};

}  // namespace scalebench::orchestrator
