// The experiment file: what to run, under which conditions, how often.
// Format reference: docs/experiment-file.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/executor.hpp"
#include "orchestrator/line_forms.hpp"
#include "stats/sequential.hpp"
#include "util/error.hpp"

namespace scalebench::orchestrator {

// A malformed experiment file. The message names the file, the field and what was expected.
class ExperimentError : public Error {
 public:
  using Error::Error;
};

enum class Launcher { Single, Mpirun, Srun, Torchrun, Command };
std::string_view launcher_name(Launcher launcher);

// Trainer arguments from one layer of the file (the experiment, a condition, a factor level):
// options from a "trainer" object and raw "args". Layers merge option by option (a later layer's
// option replaces an earlier one in place), then the raw args follow, layer by layer.
struct TrainerArgs {
  struct Option {
    std::string name;               // without the leading "--"
    std::vector<std::string> argv;  // {"--epochs", "3"}, {"--verbose"}, or {} for false
  };
  std::vector<Option> options;
  std::vector<std::string> raw;
};

// Images per epoch for a program that prints no header: a count over all ranks
// ("train_images"), or per rank for weak scaling ("train_images_per_rank": the count x np).
struct ImagesPerEpoch {
  long long count = 0;
  bool per_rank = false;
  long long for_np(int np) const { return per_rank ? count * np : count; }
  bool operator==(const ImagesPerEpoch&) const = default;
};

struct Condition {
  std::string name;
  Launcher launcher = Launcher::Single;
  std::vector<int> np;                     // {1} for "single"
  TrainerArgs trainer;                     // after the experiment's trainer args
  std::vector<std::string> launcher_args;  // inserted after the launcher's own arguments
  std::vector<std::string> command;        // for Launcher::Command: argv template
  std::map<std::string, std::string> env;
  bool oversubscribe = false;
  std::optional<ImagesPerEpoch> train_images;  // for programs without a header
  std::optional<std::string> program;          // replaces the experiment's program
  std::optional<TagOptions> line_tags;         // the launcher's tag form ("line_tags")
  // How the program marks epochs ("line_forms"); absent: the experiment's, else Keras's.
  std::optional<std::shared_ptr<const LineForms>> line_forms;
  std::optional<bool> stdout_pty;  // "stdout": "pty" (true) or "pipe" (false)
};

// One level of a factor: a name, and what it changes in a run. A level refines the condition it
// is crossed with: trainer options replace the same option, args and launcher_args are appended,
// env is merged (the level wins), program, launcher and command replace the condition's.
struct FactorLevel {
  std::string name;
  TrainerArgs trainer;
  std::vector<std::string> launcher_args;
  std::map<std::string, std::string> env;
  std::optional<std::string> program;
  std::optional<Launcher> launcher;
  std::vector<std::string> command;  // non-empty: replaces the condition's command template
  std::optional<ImagesPerEpoch> train_images;                  // replaces the condition's
  std::optional<TagOptions> line_tags;                         // replaces the condition's
  std::optional<std::shared_ptr<const LineForms>> line_forms;  // replaces the condition's
  std::optional<bool> stdout_pty;                              // replaces the condition's
  // "args_replace": the level's trainer options and args are the only ones (a script as a
  // level); "{args}" in "args": the level's args go around the others (args_around).
  bool args_replace = false;
  bool args_around = false;
};

struct Factor {
  std::string name;  // [A-Za-z_][A-Za-z0-9_]*, not a built-in column (kReservedFactorNames)
  std::vector<FactorLevel> levels;  // in file order; the first is the base of tables
};

// A cell is left out of the matrix when it matches every key of one exclusion: "condition",
// "launcher", "np" or a factor name, each with one value or a list of values.
struct Exclusion {
  std::map<std::string, std::vector<std::string>> match;  // np values as decimal text
  std::string where;                                      // "exclude[2]", for messages
};

// How the runs of one repetition are ordered (docs/experiment-file.md, "Run order").
enum class RunOrder { Interleaved, Randomized };
std::string_view run_order_name(RunOrder order);

// Names that are columns of every run (epoch_times), so a factor may not take them (compared
// without case, as SQLite compares column names).
inline constexpr std::string_view kReservedFactorNames[] = {
    "run_id", "experiment_id",   "experiment", "condition", "launcher",
    "np",     "repetition",      "attempt",    "epoch",     "duration_seconds",
    "status", "trainer_seconds", "factor",     "level",     "test_accuracy"};

struct Experiment {
  std::string name;
  std::string description;
  std::filesystem::path source_path;
  std::string spec_json;  // the parsed file, re-serialised
  int repetitions = 1;    // with a precision rule: its max, the repetitions the matrix holds
  // "repetitions": {"min", "max", "precision"}: each cell runs until its mean is known to the
  // precision (stats/sequential.hpp), in rounds (docs/experiment-file.md, "Repetitions").
  std::optional<stats::PrecisionRule> precision;
  std::optional<double> timeout_seconds;
  std::optional<std::string> program;  // trainer program; default: scalebench-train
  TrainerArgs trainer;
  // Images per epoch over all ranks, for a program that prints no header line (a condition's or
  // level's value replaces it); the trainer's own header wins when there is one.
  std::optional<ImagesPerEpoch> train_images;
  bool stdout_pty = false;  // "stdout": "pty": every run's stdout through a pseudo-terminal
  std::shared_ptr<const LineForms> line_forms = nullptr;  // "line_forms"; nullptr: Keras's
  // "warmup_epochs": epochs at the start of each run that report, stats, plot, compare and model
  // leave out (their --skip-epochs overrides it); stored in the spec, read back from there.
  int warmup_epochs = 0;
  std::vector<Condition> conditions;
  std::vector<Factor> factors;  // in name order (a JSON object's keys, sorted)
  std::vector<Exclusion> exclude;
  RunOrder order = RunOrder::Interleaved;
  std::optional<std::uint64_t> seed;  // of the randomized order; drawn at run time when absent
  // "labels": what readers see instead of stored names (report/data/labels.hpp); each key names
  // a condition, launcher, factor, factor=level, level, "np" or a column (util/label_keys.hpp).
  std::map<std::string, std::string> labels;
};

// The largest seed: 2^53 - 1, so that every seed is exact in JSON readers that use doubles.
inline constexpr std::uint64_t kMaxSeed = (std::uint64_t{1} << 53) - 1;

// Limits on what an experiment file may ask for (docs/experiment-file.md, "Limits"). They keep
// every hostile file to one error line: no recursion without bound, no clock overflow, no
// allocation that grows with a number written in the file instead of with the file's size.
inline constexpr std::size_t kMaxExperimentFileBytes = 4 * 1024 * 1024;
inline constexpr int kMaxJsonDepth = 64;
inline constexpr double kMinTimeoutSeconds = 0.001;
inline constexpr double kMaxTimeoutSeconds = 30.0 * 24 * 3600;  // 30 days
inline constexpr long long kMaxRepetitions = 100'000;
inline constexpr long long kMaxWarmupEpochs = 100'000;
inline constexpr long long kMaxNp = 1'000'000;
inline constexpr long long kMaxTrainImages = 1'000'000'000'000'000;  // 10^15
inline constexpr std::size_t kDefaultMaxRuns = 10'000;
// argv + env of one run (Linux's execve takes about 2 MiB in all), and of the whole matrix.
inline constexpr std::size_t kMaxRunArgumentBytes = 1024 * 1024;
inline constexpr std::size_t kMaxMatrixArgumentBytes = 256 * 1024 * 1024;

// Reads and validates the whole file; throws ExperimentError on the first problem. Only a
// regular file of at most kMaxExperimentFileBytes is read (a FIFO or a device is refused
// before any read).
Experiment load_experiment(const std::filesystem::path& path);
// Same, from text already read (path only names it in messages). Throws nothing but
// ExperimentError (and std::bad_alloc).
Experiment parse_experiment(const std::string& text, const std::filesystem::path& path);

// `scalebench run --precision P`: the file's rule with precision P, written into spec_json too
// (another precision is another spec, resumed apart). Throws ExperimentError for P outside (0, 1)
// or a file whose "repetitions" is an integer.
void set_precision(Experiment& experiment, double precision);

// A factor's level in one cell: (factor name, level name).
using FactorLevels = std::vector<std::pair<std::string, std::string>>;

// One cell of the matrix.
struct RunPlan {
  std::string condition;
  FactorLevels levels;  // one per factor, in the experiment's factor order
  Launcher launcher = Launcher::Single;
  int np = 1;
  int repetition = 1;  // 1-based
  LaunchSpec launch;
  TagOptions tags;
  std::optional<long long> train_images;  // from the file, when the program prints no header
  std::shared_ptr<const LineForms> line_forms = nullptr;  // nullptr: Keras's `Epoch y/z`
};

struct ExpandOptions {
  std::string default_program = "scalebench-train";  // absolute path preferred (mpirun needs it)
  bool running_as_root = false;  // adds Open MPI's documented opt-in to run as root
  // Refuse matrices of more runs than this (checked from the counts, before any plan is built).
  std::size_t max_runs = kDefaultMaxRuns;
  // The seed of a randomized order when the file gives none (the caller draws and stores it).
  std::optional<std::uint64_t> seed = std::nullopt;
  // The torchrun launcher runs each worker through this tagging wrapper (tag_wrapper.hpp),
  // a Python program with this interpreter (torchrun's own: its script's first line).
  std::string tag_wrapper = "scalebench-tag";
  std::string torchrun_python = "python3";
};

// Conditions x factor levels x np x repetitions without the excluded cells, interleaved by
// repetition (every cell of repetition 1, then repetition 2, ...) so that slow drift of the
// machine does not line up with one condition; within a repetition, conditions, then factor
// levels (the first factor slowest), then np. "order": "randomized" shuffles each repetition's
// block with the seed (the file's, else options.seed; one of them is required).
// Throws ExperimentError when the matrix has more than options.max_runs runs or its argument
// vectors would exceed kMaxRunArgumentBytes per run or kMaxMatrixArgumentBytes in all.
std::vector<RunPlan> expand_matrix(const Experiment& experiment, const ExpandOptions& options);

// The seed that randomizes an experiment's order: the file's, else `drawn`; absent for an
// interleaved order.
std::optional<std::uint64_t> order_seed(const Experiment& experiment, std::uint64_t drawn);

// The factors and their levels as stored with an instance (experiments.factors_json):
// [{"name": "model", "levels": ["vgg16", "inception_v3"]}], in the experiment's order.
std::string factors_json(const Experiment& experiment);

// argv joined with POSIX shell quoting, for humans and the database.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace scalebench::orchestrator
