// From the stamped lines of one run to its epochs: the epoch rule of the reference study.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "orchestrator/executor.hpp"

namespace scalebench::orchestrator {

// What the run was launched as, to check the program's own account against (issue "Other
// people's trainers"): a trainer that reports another np ran as something else (N independent
// np=1 trainings under a foreign MPI), and a program without a header line needs its images per
// epoch from the experiment file.
struct LineForms;
struct RunExpectations {
  std::optional<int> np;                  // the np the run was launched for
  std::optional<long long> train_images;  // images per epoch (all ranks) when no header says
  // How the program marks epochs when not as Keras does ("line_forms"; orchestrator/line_forms).
  std::shared_ptr<const LineForms> line_forms = nullptr;
};

// Below this longest gap between consecutive `Epoch` markers the epochs are taken to have
// arrived in one burst: block-buffered output flushed at exit, not epochs (docs/metrics.md).
inline constexpr double kBurstGapSeconds = 0.001;
// Line-timed and trainer-timed epochs disagree when they differ by more than this many seconds
// and this fraction of the trainer's own time (docs/metrics.md).
inline constexpr double kClockToleranceSeconds = 0.25;
inline constexpr double kClockToleranceFraction = 0.25;
// A last epoch shorter than this fraction of the other epochs' median, with no clock of the
// program's own to confirm it, was ended or begun by the wrong line (docs/metrics.md).
inline constexpr double kShortLastEpochFraction = 0.2;

struct RunAnalysis {
  std::vector<db::LineRecord> lines;    // analyze_run only: every line, tag removed, valid UTF-8
  std::vector<db::EpochRecord> epochs;  // in epoch order; duration absent when the end is unseen
  int total_epochs = 0;                 // z of the first `Epoch y/z`, 0 if none was seen
  bool training_done = false;           // a `Training done:` line arrived
  std::optional<double> startup_seconds;
  std::optional<long long> train_images;
  std::optional<std::string> hosts;       // our trainer's header: "node1:4,node2:4"
  std::optional<std::string> rank_hosts;  // and each rank's, in rank order: "node1*4,node2*4"
  // A benchmark run (`# scalebench-train benchmark=allreduce ...` header): the epoch rule does
  // not apply; its rows are read instead, and it is complete once `# Avg bus bandwidth` arrives.
  std::optional<std::string> benchmark;
  std::vector<db::AllreduceRecord> allreduce;  // rows after the benchmark header, in order
  bool benchmark_done = false;
  std::vector<std::string> problems;  // why the run is incomplete, for the run's error
  // What the run's stderr says went wrong, for a run that failed (see RunAnalyzer::add).
  std::string failure_reason;
  std::int64_t line_count = 0;
};

// Limits that keep an analysis bounded whatever a process prints (docs/database.md).
inline constexpr std::size_t kMaxProblems = 20;  // then "and N more"
inline constexpr std::size_t kMaxTrackedEpochs = 100'000;
inline constexpr std::size_t kMaxAllreduceRows = 10'000;

// The analysis as lines arrive, one at a time: memory depends on the number of epochs (bounded),
// never on the number or length of lines, so that a verbose multi-day run cannot exhaust the
// orchestrator. The caller stores each line's record as it comes (db::Database::stage_line).
//
// Epoch y's duration = t(first `Epoch y+1/z`, any rank) - t(first `Epoch y/z`, any rank); the
// last epoch ends at the first `Training done:` line, else at its end-of-epoch line (Keras's
// `469/469 - ... - loss: ...`; with every rank printing, the last rank's: a rank's end line
// belongs to the epoch that rank began last), else at the run's last line, else at the
// process's exit; lines are read as a terminal shows them (util::terminal_view); each
// epoch records which rule ended it (db::EpochRecord::end_rule). Times are arrival times, relative
// to start_monotonic_ns. Markers must arrive in epoch order: a marker for an earlier epoch than one
// already started, a total that disagrees, or a `Training done:` before the last epoch began is
// a problem (the run is stored as incomplete with it), never a negative duration. The trainer's
// own figures come from its end-of-epoch lines.
// A run whose output starts a benchmark is judged by the benchmark instead: complete with at least
// one row and its `# Avg bus bandwidth` line, and no wrong elements (docs/allreduce-benchmark.md).
class RunAnalyzer {
 public:
  explicit RunAnalyzer(std::int64_t start_monotonic_ns, TagOptions tags = {},
                       RunExpectations expected = {});
  // Parses one line and returns its record (seq, offset, stream, rank, text) for storage.
  db::LineRecord add(const StampedLine& line);
  // Completes the analysis; its `lines` stay empty. `exit_offset_seconds`: when the process
  // exited, on the same clock as the lines (the last epoch's end when nothing else marks it).
  RunAnalysis finish(std::optional<double> exit_offset_seconds = std::nullopt);
  // Progress so far: the highest epoch started (0 before `Epoch 1/z`) and z (0 if unknown).
  int latest_epoch() const { return max_started_epoch_; }
  int epochs_expected() const { return analysis_.total_epochs; }

 private:
  void problem(std::string text);
  void check_np(const std::optional<std::string>& reported, std::int64_t seq);
  void check_timing(const RunAnalysis& analysis);
  void check_last_epoch(const RunAnalysis& analysis, const std::string& untagged);

  std::int64_t start_ns_;
  TagOptions tags_;
  RunExpectations expected_;
  struct RankLine {
    std::optional<int> rank;
    Stream stream = Stream::Stdout;
    std::optional<std::string> text;  // set when put together from chunks
    std::optional<double> began;      // when its first byte arrived, if known
  };
  struct PartialLine {
    std::string text;
    std::optional<double> began;  // its first chunk's arrival
  };
  struct EpochLine {
    std::optional<EpochMarker> marker;
    std::optional<EpochEnd> end;
    std::optional<double> marker_at;  // when the epoch began, if not at this line (ends only)
  };
  RankLine rank_line(const StampedLine& stamped, const TaggedLine& tagged, Stream stream);
  std::optional<double> arrival_of(const StampedLine& stamped, std::size_t at) const;
  void note_stderr(const std::string& text, bool rank_tagged, int rank_key);
  EpochLine read_form_line(const std::string& text, int rank_key);
  bool read_epoch_line(const std::string& text, std::int64_t seq, double offset,
                       std::optional<double> began, int rank_key);
  void read_trainer_line(const std::string& text, std::int64_t seq, double offset);
  void note_rank_start(int epoch, int rank, double at);
  void on_marker(const EpochMarker& marker, std::int64_t seq, double at, int rank_key);
  void attach_form_metrics(int rank_key);
  static void set_metrics(EpochEnd& values,
                          const std::vector<std::pair<std::string, double>>& metrics);
  std::optional<std::string> hint_for(std::string_view text) const;
  std::optional<std::string> form_hint_;  // a preset that would have found epochs
  std::map<int, std::vector<std::pair<std::string, double>>> form_metrics_;  // per rank
  void hold_partial(int rank, Stream stream, std::string_view text, std::optional<double> at);
  std::optional<PartialLine> take_partial(int rank, Stream stream);
  std::map<std::pair<int, Stream>, PartialLine> partial_lines_;  // per rank and stream
  std::map<int, std::int64_t> undated_starts_;  // epoch -> line of a start dated at its newline
  std::vector<db::RankEnd> rank_ends(int epoch) const;
  int untagged_printers(int epoch) const;
  int untagged_end_epoch(int current, double at) const;
  std::map<int, int> untagged_ends_;  // epoch -> untagged end lines counted for it

  static constexpr int kUntagged = -1;  // the rank key of lines without a launcher tag
  std::optional<double> last_line_at_;
  // Per epoch, per rank (kUntagged for untagged lines): the first end-of-epoch (Keras summary)
  // line, and the first `Epoch y/z` marker. Bounded together by kMaxRankEntries.
  std::map<int, std::map<int, double>> epoch_end_line_at_;
  std::map<int, std::map<int, double>> rank_start_at_;
  std::map<std::pair<int, int>, int> rank_start_count_;  // (epoch, rank key) -> starts seen
  std::size_t rank_entries_ = 0;
  static constexpr std::size_t kMaxRankEntries = 1'000'000;
  std::optional<double> last_marker_at_;
  double longest_marker_gap_ = 0;
  bool np_checked_ = false;
  std::map<long long, int> worker_index_;  // Ray worker pid -> rank, by first appearance
  RunAnalysis analysis_;
  std::int64_t seq_ = 0;
  std::size_t dropped_problems_ = 0;
  std::map<int, double> epoch_start_;  // first arrival of `Epoch y/z`
  std::map<int, EpochEnd> epoch_end_;
  std::optional<double> done_at_;
  std::map<int, int> current_epoch_;  // per rank: the epoch its next end-of-epoch line ends
  int max_started_epoch_ = 0;
  bool epoch_limit_reported_ = false;
  std::string transport_;  // from the benchmark header
  // For failure_reason: the trainer's last stderr line (rank-tagged under a launcher), the first
  // paragraph of the launcher's own first `-----` block (mpirun's message), the last stderr line.
  std::string last_rank_stderr_;
  std::string last_stderr_;
  void end_paragraph(int rank);
  std::string failure_reason();  // run_failure.cpp
  std::string last_rank_error_;  // the last stderr line of a rank that says "error"
  std::string last_error_;       // the same from the launcher (srun: error: ...)
  std::string pmi_reason_;       // the first stderr paragraph that speaks of PMI
  std::string node_line_;  // the launcher's first line naming the node that failed (see finish)
  std::map<int, std::string> paragraphs_;  // the stderr paragraph being read, per rank
  std::string block_reason_;
  bool in_block_ = false;
  bool block_reason_done_ = false;
};

// Makes an analysis whose times are relative to one instant relative to another: adds
// `seconds` to every start offset (durations are differences and do not change).
void shift_offsets(RunAnalysis& analysis, double seconds);

// The whole analysis of lines already collected (tests, small runs); `lines` is filled.
RunAnalysis analyze_run(const std::vector<StampedLine>& lines, std::int64_t start_monotonic_ns,
                        const TagOptions& tags = {}, const RunExpectations& expected = {},
                        std::optional<double> exit_offset_seconds = std::nullopt);

// Text for one line of an error message: C0/C1 control characters (escape sequences, NUL) shown
// as \xNN, so that trainer output quoted in an error cannot drive a terminal; cut to `max_bytes`.
std::string printable_excerpt(std::string_view text, std::size_t max_bytes = 300);

}  // namespace scalebench::orchestrator
