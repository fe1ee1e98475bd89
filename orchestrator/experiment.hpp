// The experiment file: what to run, under which conditions, how often.
// Format reference: docs/experiment-file.md.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "orchestrator/executor.hpp"
#include "util/error.hpp"

namespace scalebench::orchestrator {

// A malformed experiment file. The message names the file, the field and what was expected.
class ExperimentError : public Error {
 public:
  using Error::Error;
};

enum class Launcher { Single, Mpirun, Srun, Command };
std::string_view launcher_name(Launcher launcher);

struct Condition {
  std::string name;
  Launcher launcher = Launcher::Single;
  std::vector<int> np;                     // {1} for "single"
  std::vector<std::string> trainer_args;   // appended to the experiment's trainer args
  std::vector<std::string> launcher_args;  // inserted after the launcher's own arguments
  std::vector<std::string> command;        // for Launcher::Command: argv template
  std::map<std::string, std::string> env;
  bool oversubscribe = false;
};

struct Experiment {
  std::string name;
  std::string description;
  std::filesystem::path source_path;
  std::string spec_json;  // the parsed file, re-serialised
  int repetitions = 1;
  std::optional<double> timeout_seconds;
  std::optional<std::string> program;  // trainer program; default: scalebench-train
  std::vector<std::string> trainer_args;
  std::vector<Condition> conditions;
};

// Limits on what an experiment file may ask for (docs/experiment-file.md, "Limits"). They keep
// every hostile file to one error line: no recursion without bound, no clock overflow, no
// allocation that grows with a number written in the file instead of with the file's size.
inline constexpr std::size_t kMaxExperimentFileBytes = 4 * 1024 * 1024;
inline constexpr int kMaxJsonDepth = 64;
inline constexpr double kMinTimeoutSeconds = 0.001;
inline constexpr double kMaxTimeoutSeconds = 30.0 * 24 * 3600;  // 30 days
inline constexpr long long kMaxRepetitions = 100'000;
inline constexpr long long kMaxNp = 1'000'000;
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

// One cell of the matrix.
struct RunPlan {
  std::string condition;
  Launcher launcher = Launcher::Single;
  int np = 1;
  int repetition = 1;  // 1-based
  LaunchSpec launch;
  TagOptions tags;
};

struct ExpandOptions {
  std::string default_program = "scalebench-train";  // absolute path preferred (mpirun needs it)
  bool running_as_root = false;  // adds Open MPI's documented opt-in to run as root
  // Refuse matrices of more runs than this (checked from the counts, before any plan is built).
  std::size_t max_runs = kDefaultMaxRuns;
};

// Conditions x np x repetitions, interleaved by repetition (every cell of repetition 1, then
// repetition 2, ...) so that slow drift of the machine does not line up with one condition.
// Throws ExperimentError when the matrix has more than options.max_runs runs or its argument
// vectors would exceed kMaxRunArgumentBytes per run or kMaxMatrixArgumentBytes in all.
std::vector<RunPlan> expand_matrix(const Experiment& experiment, const ExpandOptions& options);

// argv joined with POSIX shell quoting, for humans and the database.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace scalebench::orchestrator
