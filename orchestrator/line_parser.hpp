// Parsing one output line: the launcher's rank tag, and what the trainer said.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace scalebench::orchestrator {

enum class Stream { Stdout, Stderr };
std::string_view stream_name(Stream stream);

// A user's regular expression with named groups `(?<name>...)` (or RE2's `(?P<name>...)`),
// matched by RE2: time linear in the text, memory bounded when it compiles, so no pattern can
// stall the event loop that also serves timeouts and signals (a backtracking engine takes
// exponential time on `^(a|aa)+x$`). RE2's syntax: no backreferences or lookaround.
// Throws std::invalid_argument with the reason: not a valid regex, a name not in `names`, a
// name twice, a pattern too large for the memory budget.
class NamedRegex {
 public:
  NamedRegex() = default;
  NamedRegex(const std::string& pattern, const std::vector<std::string_view>& names);
  // The first match in `text` (at its start only, when `anchored`): each capture group's text by
  // number (0: the whole match), absent for a group that took no part.
  using Groups = std::vector<std::optional<std::string_view>>;
  std::optional<Groups> search(std::string_view text, bool anchored = false) const;
  std::optional<std::size_t> group_number(const std::string& name) const;
  bool has_group(const std::string& name) const { return groups_.contains(name); }

 private:
  std::shared_ptr<const re2::RE2> regex_;
  std::map<std::string, std::size_t> groups_;  // name -> capture group number
};
inline NamedRegex compile_named_regex(const std::string& pattern,
                                      const std::vector<std::string_view>& names) {
  return NamedRegex(pattern, names);
}
// The most memory one compiled pattern may take (RE2's max_mem): a larger one is refused.
inline constexpr std::int64_t kPatternMemoryBytes = 8 << 20;

// A user's tag form: a regular expression with one group `(?<rank>...)` of digits, matched at
// the start of a line; the payload is what follows the match.
class TagPattern {
 public:
  // Throws std::invalid_argument with the reason: not a valid regex, no or two (?<rank>) groups.
  explicit TagPattern(const std::string& pattern);
  const std::string& text() const { return text_; }
  // The rank and the length of the matched prefix, when the line starts with the pattern.
  std::optional<std::pair<int, std::size_t>> match(std::string_view line) const;

 private:
  std::string text_;
  NamedRegex regex_;
  std::size_t rank_group_ = 0;
};
// Only this much of a line is matched against a tag pattern: tags are prefixes.
inline constexpr std::size_t kTagPatternWindow = 256;

// Which tag forms to recognise besides the bracketed ones that are always accepted (Open MPI's
// `[1,0]<stdout>:` and horovodrun's `[0]<stdout>:`). Each is off by default because an untagged
// line could be misread as one: "3: done", "[0] loading", "[rank0]: x".
struct TagOptions {
  // `N: text` as written by `srun --label`.
  bool rank_colon_prefix = false;
  // `[N] text`: MPICH/Hydra's and Intel MPI's `mpiexec -l`.
  bool rank_bracket_prefix = false;
  // torchrun with --tee: `[default0]:text` (torch 1.x, role name + local rank) and
  // `[rank0]:text` (torch 2.x).
  bool torchrun_prefix = false;
  // Ray Train workers: `(RayTrainWorker pid=123, ip=10.0.0.1) text`, possibly in ANSI colour and
  // with Ray's dedup suffix ` [repeated 3x across cluster]`; the worker is known by its pid.
  bool ray_prefix = false;
  // A user's form (`"line_tags": {"pattern": ...}`).
  std::shared_ptr<const TagPattern> pattern = nullptr;
};

struct TaggedLine {
  std::optional<int> rank;                             // absent for untagged lines
  std::optional<Stream> tag_stream;                    // the stream named inside the tag, if any
  std::string_view payload;                            // the text after the tag
  std::optional<long long> worker_pid = std::nullopt;  // Ray: the worker's pid (numbered by
                                                       // the analyzer in order of appearance)
};

// The tag forms by name, for the experiment file's "line_tags" (docs/launchers.md): openmpi
// (nothing more than the default), srun, mpich, intelmpi, torchrun, ray. Throws
// std::invalid_argument naming the known ones.
TagOptions tag_options_named(std::string_view name);
inline constexpr std::string_view kLineTagNames[] = {"openmpi",  "srun",     "mpich",
                                                     "intelmpi", "torchrun", "ray"};

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

// The payload cut at its embedded Open MPI tags: the first chunk belongs to the line's own tag
// (rank and stream absent), each later one to the tag before it. Ranks that write partial lines
// (progress bars redraw without a newline) interleave: `[1,0]<stdout>:A[1,1]<stdout>:B` followed
// by a newline is A, still open, from rank 0 and the end of rank 1's line B.
struct TaggedChunk {
  std::optional<int> rank;
  std::optional<Stream> stream;
  std::string_view text;
};
std::vector<TaggedChunk> split_tagged_chunks(std::string_view payload);

// `Epoch y/z` with 1 <= y <= z (surrounding whitespace allowed, nothing else).
std::optional<EpochMarker> parse_epoch_marker(std::string_view payload);

// The end-of-epoch line: `s/s - loss: 0.5 - accuracy: 0.8 - ... - epoch_seconds: 4.8` (ours), or
// Keras's `469/469 - 3s - loss: 0.5 - accuracy: 0.8 - val_loss: 0.4 - val_accuracy: 0.85` (also
// `- 3s 6ms/step`, and `- 3.214s` with decimals): Keras's time item is the program's own epoch
// seconds, with half its last digit as resolution (0.5 s for whole seconds); `val_accuracy` is
// the accuracy on held-out data (test_accuracy). Our keys win over Keras's.
struct EpochEnd {
  std::optional<double> loss;
  std::optional<double> accuracy;
  std::optional<double> test_accuracy;
  std::optional<double> validation_accuracy;  // line forms only (Lightning's val_acc)
  std::optional<double> images_per_second;
  std::optional<double> epoch_seconds;
  double epoch_seconds_resolution = 0;  // how far the printed value may be from the clock's
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

// Where a chunk read after a line's first began in that line, and when it arrived.
struct ByteArrival {
  std::size_t offset = 0;  // in the line's stored bytes
  std::int64_t ns = 0;     // steady clock
};

// Splits a byte stream into lines as chunks arrive; a line may span chunks. A line longer than
// max_line_bytes keeps its first max_line_bytes bytes and ends with
// " [scalebench: line cut: N more bytes not stored]".
class LineSplitter {
 public:
  LineSplitter() = default;
  explicit LineSplitter(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}
  // Appends the complete lines contained in `chunk` (without '\n') to `out`.
  void feed(std::string_view chunk, std::vector<std::string>& out);
  // The same, and for each line the `now` of the chunk that brought its first byte to `started`
  // (a progress bar's line begins long before its newline), and to `arrivals` where each later
  // chunk of it began (byte offset in the line, its `now`): a launcher's tag in the middle of a
  // line is dated by the chunk that brought it (every redraw of a bar under mpirun is one).
  void feed(std::string_view chunk, std::vector<std::string>& out,
            std::vector<std::int64_t>* started, std::int64_t now,
            std::vector<std::vector<ByteArrival>>* arrivals = nullptr);
  // When the unterminated rest began (the `now` of its first chunk), and its later chunks.
  std::int64_t pending_since() const { return pending_since_; }
  std::vector<ByteArrival> take_pending_arrivals() { return std::move(pending_arrivals_); }
  // The unterminated rest at end of stream, if any.
  std::optional<std::string> finish();

 private:
  void append(std::string_view part);
  std::string take();
  std::size_t max_line_bytes_ = kMaxLineBytes;
  std::string pending_;
  std::size_t dropped_ = 0;
  std::int64_t pending_since_ = 0;
  std::vector<ByteArrival> pending_arrivals_;
};

}  // namespace scalebench::orchestrator
