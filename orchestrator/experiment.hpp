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

namespace scalebench::orchestrator {

// A malformed experiment file. The message names the file, the field and what was expected.
class ExperimentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Launcher { Single, Mpirun, Srun, Command };
std::string_view launcher_name(Launcher launcher);

struct Condition {
  std::string name;
  Launcher launcher = Launcher::Single;
  std::vector<int> np;                        // {1} for "single"
  std::vector<std::string> trainer_args;      // appended to the experiment's trainer args
  std::vector<std::string> launcher_args;     // inserted after the launcher's own arguments
  std::vector<std::string> command;           // for Launcher::Command: argv template
  std::map<std::string, std::string> env;
  bool oversubscribe = false;
};

struct Experiment {
  std::string name;
  std::string description;
  std::filesystem::path source_path;
  std::string spec_json;                      // the parsed file, re-serialised
  int repetitions = 1;
  std::optional<double> timeout_seconds;
  std::optional<std::string> program;         // trainer program; default: scalebench-train
  std::vector<std::string> trainer_args;
  std::vector<Condition> conditions;
};

// Reads and validates the whole file; throws ExperimentError on the first problem.
Experiment load_experiment(const std::filesystem::path& path);
// Same, from text already read (path only names it in messages).
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
};

// Conditions x np x repetitions, interleaved by repetition (every cell of repetition 1, then
// repetition 2, ...) so that slow drift of the machine does not line up with one condition.
std::vector<RunPlan> expand_matrix(const Experiment& experiment, const ExpandOptions& options);

// argv joined with POSIX shell quoting, for humans and the database.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace scalebench::orchestrator
