// The experiment's matrix: conditions x factor levels x np x repetitions resolved into run
// plans (argv, environment, line forms), checked against the limits before any is built, and
// ordered (interleaved or randomized). The reading of the file is orchestrator/experiment.cpp.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <set>

#include "orchestrator/command_template.hpp"
#include "orchestrator/experiment.hpp"
#include "util/text.hpp"

namespace scalebench::orchestrator {

namespace {

// Bytes a string costs in an argv or environment held in memory (its text and its object).
double cost(std::string_view text) {
  return static_cast<double>(text.size() + sizeof(std::string));
}

// One condition crossed with one level of every factor, the levels applied.
struct ResolvedCell {
  Condition condition;  // launcher, launcher_args, env and command as the run sees them
  std::vector<std::string> trainer;  // the program and its merged arguments
  std::string program;
  FactorLevels levels;
  std::string where;           // the condition and levels, for messages
  std::string command_factor;  // the factor whose level set "command", if any
  std::size_t condition_index = 0;
};

void merge_options(std::vector<TrainerArgs::Option>& into, const TrainerArgs& layer) {
  for (const auto& option : layer.options) {
    const auto same = std::find_if(into.begin(), into.end(),
                                   [&](const auto& o) { return o.name == option.name; });
    if (same != into.end())
      same->argv = option.argv;
    else
      into.push_back(option);
  }
}

// A program that is there but cannot be run (no execute bit, a directory) would fail every run
// of the matrix, each after its launcher's start-up: refused before the first. Run directly by
// single, mpirun and srun, and as a "command"'s first element; torchrun hands a script to
// Python, which needs no execute bit. A path that is not here is left to the launcher (srun's
// nodes may see a filesystem this machine does not).
void check_executable(const Experiment& experiment, const ResolvedCell& cell) {
  const auto check = [&](const std::string& program, const char* field) {
    if (program.find('/') == std::string::npos) return;  // searched in PATH by the launcher
    std::error_code error;
    const auto status = std::filesystem::status(program, error);
    if (error || !std::filesystem::exists(status)) return;
    const bool runnable =
        std::filesystem::is_regular_file(status) && ::access(program.c_str(), X_OK) == 0;
    if (!runnable)
      throw ExperimentError(fmt::format(
          "{}: field \"{}\" ({}): {} {}; every run would fail (chmod +x it, or name an "
          "interpreter as the program and the script in \"args\")",
          experiment.source_path.string(), field, cell.where, program,
          std::filesystem::is_directory(status) ? "is a directory" : "is not executable"));
  };
  switch (cell.condition.launcher) {
    case Launcher::Single:
    case Launcher::Mpirun:
    case Launcher::Srun:
      check(cell.program, "program");
      break;
    case Launcher::Command:
      if (!cell.condition.command.empty()) check(cell.condition.command.front(), "command");
      break;
    default:
      break;
  }
}

ResolvedCell resolve_cell(const Experiment& experiment, const Condition& condition,
                          const std::vector<const FactorLevel*>& levels,
                          const std::string& default_program) {
  ResolvedCell cell;
  cell.condition = condition;
  cell.program = condition.program.value_or(experiment.program.value_or(default_program));
  std::vector<TrainerArgs::Option> options;
  merge_options(options, experiment.trainer);
  merge_options(options, condition.trainer);
  std::vector<std::string> raw = experiment.trainer.raw;
  raw.insert(raw.end(), condition.trainer.raw.begin(), condition.trainer.raw.end());
  std::vector<std::string> prefix, suffix;  // a level's args around the others ("{args}")
  cell.where = fmt::format("condition \"{}\"", condition.name);
  if (!cell.condition.train_images) cell.condition.train_images = experiment.train_images;
  if (!cell.condition.stdout_pty) cell.condition.stdout_pty = experiment.stdout_pty;
  for (std::size_t f = 0; f < levels.size(); ++f) {
    const FactorLevel& level = *levels[f];
    cell.levels.emplace_back(experiment.factors[f].name, level.name);
    cell.where += fmt::format(", {} \"{}\"", experiment.factors[f].name, level.name);
    if (level.args_replace) {
      // A script as a level: only its own arguments, not the experiment's and condition's.
      options.clear();
      raw.clear();
      prefix.clear();
      suffix.clear();
    }
    merge_options(options, level.trainer);
    if (level.args_around) {
      // The level's args around everything so far: before the slot, the rest after it.
      const auto slot = std::find(level.trainer.raw.begin(), level.trainer.raw.end(), "{args}");
      prefix.insert(prefix.begin(), level.trainer.raw.begin(), slot);
      suffix.insert(suffix.end(), slot + 1, level.trainer.raw.end());
    } else {
      raw.insert(raw.end(), level.trainer.raw.begin(), level.trainer.raw.end());
    }
    auto& c = cell.condition;
    c.launcher_args.insert(c.launcher_args.end(), level.launcher_args.begin(),
                           level.launcher_args.end());
    for (const auto& [key, value] : level.env) c.env[key] = value;
    if (level.program) cell.program = *level.program;
    if (level.launcher) c.launcher = *level.launcher;
    if (level.train_images) c.train_images = level.train_images;
    if (level.line_tags) c.line_tags = level.line_tags;
    if (level.line_forms) c.line_forms = level.line_forms;
    if (level.stdout_pty) c.stdout_pty = level.stdout_pty;
    if (!level.command.empty()) {
      c.command = level.command;
      cell.command_factor = experiment.factors[f].name;
    }
  }
  // A relative path (not a bare name, which is searched in PATH) is relative to the experiment
  // file, so that a study ships with its scripts and runs from any directory.
  if (const std::filesystem::path program(cell.program);
      program.is_relative() && cell.program.find('/') != std::string::npos)
    cell.program = (std::filesystem::absolute(experiment.source_path).parent_path() / program)
                       .lexically_normal()
                       .string();
  cell.trainer = {cell.program};
  cell.trainer.insert(cell.trainer.end(), prefix.begin(), prefix.end());
  for (const auto& option : options)
    cell.trainer.insert(cell.trainer.end(), option.argv.begin(), option.argv.end());
  cell.trainer.insert(cell.trainer.end(), raw.begin(), raw.end());
  cell.trainer.insert(cell.trainer.end(), suffix.begin(), suffix.end());
  return cell;
}

// A level may change the launcher; the combination must still make sense.
void check_resolved(const Experiment& experiment, const ResolvedCell& cell) {
  const auto& c = cell.condition;
  const auto fail = [&](const std::string& what) {
    throw ExperimentError(fmt::format("{}: {}: {}; leave the cell out with \"exclude\"",
                                      experiment.source_path.string(), cell.where, what));
  };
  if (c.launcher == Launcher::Single && !c.launcher_args.empty())
    fail("launcher_args, but launcher \"single\" has no launcher to pass them to");
  if (c.launcher == Launcher::Single && c.np != std::vector<int>{1})
    fail("launcher \"single\" with np other than [1]");
  if (c.launcher == Launcher::Command && c.command.empty())
    fail("launcher \"command\" without a \"command\" template");
  if (c.train_images && c.train_images->per_rank)
    for (int np : c.np)
      if (c.train_images->count > kMaxTrainImages / np)
        fail(fmt::format("train_images_per_rank {} x np {} is more than {} images",
                         c.train_images->count, np, kMaxTrainImages));
  if (c.launcher != Launcher::Command && !cell.command_factor.empty())
    fail(fmt::format("a \"command\" from factor \"{}\", but launcher \"{}\"", cell.command_factor,
                     launcher_name(c.launcher)));
}

// An upper bound of one run's argv and env for a cell, computed from sizes alone: a template
// repeating {args} or {program} must be refused before it is built, not after.
double run_bytes(const ResolvedCell& cell) {
  const auto& condition = cell.condition;
  double trainer = 0;
  for (const auto& arg : cell.trainer) trainer += cost(arg);
  double total = 0;
  for (const auto& [key, value] : condition.env) total += cost(key) + cost(value);
  const double digits = 20;  // the widest np or repetition
  switch (condition.launcher) {
    case Launcher::Single:
      return total + trainer;
    case Launcher::Mpirun:
    case Launcher::Srun:
    case Launcher::Torchrun:
      total += trainer + 5 * cost("--oversubscribe") + 2 * cost("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM");
      for (const auto& arg : condition.launcher_args) total += cost(arg);
      return total;
    case Launcher::Command:
      for (const auto& part : condition.command) {
        if (part == "{args}") {
          total += trainer - cost(cell.program);
          continue;
        }
        double size = static_cast<double>(sizeof(std::string));
        scan_template(
            part, [&](std::string_view text) { size += static_cast<double>(text.size()); },
            [&](std::string_view name) {
              if (name == "program")
                size += static_cast<double>(cell.program.size());
              else if (name == "condition")
                size += static_cast<double>(condition.name.size());
              else
                size += digits;
            });
        total += size;
      }
      return total;
  }
  return total;
}

// One "command" element with its placeholders replaced in a single pass.
std::string expand_part(std::string_view part, int np, const std::string& program, int repetition,
                        const std::string& condition) {
  std::string out;
  scan_template(
      part, [&](std::string_view text) { out += text; },
      [&](std::string_view name) {
        if (name == "np")
          out += std::to_string(np);
        else if (name == "program")
          out += program;
        else if (name == "repetition")
          out += std::to_string(repetition);
        else if (name == "condition")
          out += condition;
        else
          out += fmt::format("{{{}}}", name);  // refused by parse_experiment
      });
  return out;
}

bool matches(const Exclusion& exclusion, const ResolvedCell& cell, int np) {
  for (const auto& [key, values] : exclusion.match) {
    std::string actual;
    if (key == "condition")
      actual = cell.condition.name;
    else if (key == "launcher")
      actual = std::string(launcher_name(cell.condition.launcher));
    else if (key == "np")
      actual = std::to_string(np);
    else
      for (const auto& [factor, level] : cell.levels)
        if (factor == key) actual = level;
    if (std::find(values.begin(), values.end(), actual) == values.end()) return false;
  }
  return true;
}

// The cells of one repetition: conditions x level combinations (first factor slowest), each
// with the np values that are not excluded. Checks the limits from counts before building.
std::vector<std::pair<ResolvedCell, std::vector<int>>> resolve_matrix(
    const Experiment& experiment, const ExpandOptions& options) {
  const auto file = experiment.source_path.string();
  if (experiment.timeout_seconds && !(*experiment.timeout_seconds >= kMinTimeoutSeconds &&
                                      *experiment.timeout_seconds <= kMaxTimeoutSeconds))
    throw ExperimentError(
        fmt::format("{}: field \"timeout_seconds\": expected a number of seconds from {} to {} (30 "
                    "days), got {}",
                    file, kMinTimeoutSeconds, kMaxTimeoutSeconds, *experiment.timeout_seconds));
  // Combinations before exclusion bound the work of enumerating them.
  double combinations = 1;
  for (const auto& factor : experiment.factors)
    combinations *= static_cast<double>(factor.levels.size());
  if (combinations * static_cast<double>(experiment.conditions.size()) >
      static_cast<double>(options.max_runs))
    throw ExperimentError(fmt::format(
        "{}: field \"factors\": expected at most {} runs in the matrix, got {} conditions x {} "
        "level combinations = {}; raise the limit with --max-runs N if you mean it",
        file, options.max_runs, experiment.conditions.size(), combinations,
        combinations * static_cast<double>(experiment.conditions.size())));

  std::vector<std::pair<ResolvedCell, std::vector<int>>> cells;
  std::vector<bool> exclusion_used(experiment.exclude.size(), false);
  std::vector<std::size_t> odometer(experiment.factors.size(), 0);
  for (std::size_t c = 0; c < experiment.conditions.size(); ++c) {
    const auto& condition = experiment.conditions[c];
    std::fill(odometer.begin(), odometer.end(), 0);
    while (true) {
      std::vector<const FactorLevel*> levels;
      for (std::size_t f = 0; f < odometer.size(); ++f)
        levels.push_back(&experiment.factors[f].levels[odometer[f]]);
      auto cell = resolve_cell(experiment, condition, levels, options.default_program);
      cell.condition_index = c;
      std::vector<int> kept;
      for (int np : condition.np) {
        bool excluded = false;
        for (std::size_t e = 0; e < experiment.exclude.size(); ++e)
          if (matches(experiment.exclude[e], cell, np)) excluded = exclusion_used[e] = true;
        if (!excluded) kept.push_back(np);
      }
      if (!kept.empty()) {
        cell.condition.np = kept;
        check_resolved(experiment, cell);
        check_executable(experiment, cell);
        cells.emplace_back(std::move(cell), std::move(kept));
      }
      // Next combination: the last factor turns fastest.
      std::size_t f = odometer.size();
      while (f > 0 && ++odometer[f - 1] == experiment.factors[f - 1].levels.size())
        odometer[--f] = 0;
      if (f == 0) break;
    }
  }
  for (std::size_t e = 0; e < experiment.exclude.size(); ++e)
    if (!exclusion_used[e])
      throw ExperimentError(
          fmt::format("{}: field \"{}\": expected an exclusion that matches a cell of the matrix, "
                      "but it matches none (a typo, or a combination that does not occur)",
                      file, experiment.exclude[e].where));
  if (cells.empty())
    throw ExperimentError(
        fmt::format("{}: field \"exclude\": every cell of the matrix is excluded", file));

  std::size_t per_repetition = 0;
  for (const auto& [cell, np] : cells) per_repetition += np.size();
  const auto repetitions = static_cast<std::size_t>(std::max(experiment.repetitions, 0));
  if (repetitions > options.max_runs / per_repetition)
    throw ExperimentError(fmt::format(
        "{}: field \"repetitions\": expected at most {} runs in the matrix (repetitions x the np "
        "values of all conditions and factor levels), got {} x {} = {}; raise the limit with "
        "--max-runs N if you mean it",
        file, options.max_runs, repetitions, per_repetition,
        static_cast<double>(repetitions) * static_cast<double>(per_repetition)));
  double matrix = 0;
  for (const auto& [cell, np] : cells) {
    const double one_run = run_bytes(cell);
    if (one_run > static_cast<double>(kMaxRunArgumentBytes))
      throw ExperimentError(fmt::format(
          "{}: field \"conditions[{}]\": expected the argv and env of one run to hold at most {} "
          "bytes (1 MiB), got about {:.0f} ({})",
          file, cell.condition_index, kMaxRunArgumentBytes, one_run, cell.where));
    matrix += one_run * static_cast<double>(np.size()) * static_cast<double>(repetitions);
  }
  if (matrix > static_cast<double>(kMaxMatrixArgumentBytes))
    throw ExperimentError(fmt::format(
        "{}: field \"repetitions\": expected the argv and env of all runs to hold at most {} bytes "
        "(256 MiB), got about {:.0f}; fewer repetitions or shorter arguments",
        file, kMaxMatrixArgumentBytes, matrix));
  return cells;
}

RunPlan make_plan(const Experiment& experiment, const ResolvedCell& cell, int np, int repetition,
                  const ExpandOptions& options) {
  const auto& condition = cell.condition;
  const auto& trainer = cell.trainer;
  RunPlan plan;
  plan.condition = condition.name;
  plan.levels = cell.levels;
  plan.launcher = condition.launcher;
  plan.np = np;
  plan.repetition = repetition;
  plan.launch.env = condition.env;
  if (condition.train_images) plan.train_images = condition.train_images->for_np(np);
  plan.launch.stdout_pty = condition.stdout_pty.value_or(false);
  // Python writes into a pipe in blocks: its lines would arrive at exit, not as printed. The
  // experiment can still set another value (an empty one turns it off).
  plan.launch.env.emplace("PYTHONUNBUFFERED", "1");
  // In range (resolve_matrix), so the product and the cast are exact enough and defined.
  if (experiment.timeout_seconds)
    plan.launch.timeout =
        std::chrono::milliseconds(std::llround(*experiment.timeout_seconds * 1000.0));
  if (condition.line_tags) plan.tags = *condition.line_tags;
  plan.line_forms = condition.line_forms ? *condition.line_forms : experiment.line_forms;
  auto& argv = plan.launch.argv;
  switch (condition.launcher) {
    case Launcher::Single:
      argv = trainer;
      break;
    case Launcher::Mpirun:
      argv = {"mpirun", "-np", std::to_string(np), "--tag-output"};
      if (condition.oversubscribe) argv.push_back("--oversubscribe");
      argv.insert(argv.end(), condition.launcher_args.begin(), condition.launcher_args.end());
      argv.insert(argv.end(), trainer.begin(), trainer.end());
      if (options.running_as_root) {
        // Open MPI refuses root unless both variables are set (mpirun(1), "--allow-run-as-root").
        plan.launch.env.emplace("OMPI_ALLOW_RUN_AS_ROOT", "1");
        plan.launch.env.emplace("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
      }
      break;
    case Launcher::Srun:
      argv = {"srun", "-n", std::to_string(np), "--label"};
      argv.insert(argv.end(), condition.launcher_args.begin(), condition.launcher_args.end());
      argv.insert(argv.end(), trainer.begin(), trainer.end());
      plan.tags.rank_colon_prefix = true;
      break;
    case Launcher::Torchrun: {
      // One node, a free rendezvous port per run (--standalone). Each worker runs through our
      // tagging wrapper, which passes its stdout and stderr on to its own stdout at once, each
      // chunk tagged `[1,<rank>]<stdout>:` as mpirun --tag-output does: torchrun's own tagging
      // (--tee) copies a log file it polls every 0.1 s, and its untagged stdout cannot tell
      // ranks apart. --redirects/--tee 2 are there because torch 1.13's torchrun crashes on
      // Python 3.11 with its defaults (0 and 3 parse to None); they only touch the wrapper's own
      // stderr. A Python script runs with torchrun's interpreter, as torchrun runs it
      // (docs/launchers.md).
      argv = {"torchrun",         "--standalone", "--nnodes", "1",     "--nproc_per_node",
              std::to_string(np), "--redirects",  "2",        "--tee", "2"};
      // torchrun's own ways of starting Python become the wrapper's: --no_python runs the
      // program as it is; -m/--module runs it as a module; --run_path as a script (it cannot be
      // combined with --no_python, which the wrapper needs).
      bool users_no_python = false, module = false;
      for (const auto& arg : condition.launcher_args) {
        if (arg == "-m" || arg == "--module")
          module = true;
        else if (arg != "--run_path" && arg != "--run-path")
          argv.push_back(arg);
        users_no_python = users_no_python || arg == "--no_python" || arg == "--no-python";
      }
      // A program that is itself a Python interpreter (`"program": "/usr/bin/python3"`, the
      // script in "args") runs as it is, as one under the user's --no_python does.
      const bool interpreter =
          !trainer.empty() &&
          std::filesystem::path(trainer.front()).filename().string().starts_with("python");
      if (!users_no_python) argv.push_back("--no_python");
      argv.push_back(options.tag_wrapper);
      if (!users_no_python && !interpreter) {
        // torchrun's interpreter: PYTHON_EXEC where the run sets it, as torchrun reads it.
        const auto exec = plan.launch.env.find("PYTHON_EXEC");
        argv.insert(argv.end(), {"--python", exec != plan.launch.env.end() && !exec->second.empty()
                                                 ? exec->second
                                                 : options.torchrun_python});
      }
      argv.push_back("--");  // torchrun may drop it: the wrapper reads the program without it
      if (module && !users_no_python && !interpreter) argv.push_back("-m");
      argv.insert(argv.end(), trainer.begin(), trainer.end());
      plan.tags.torchrun_prefix = true;
      break;
    }
    case Launcher::Command:
      for (const auto& part : condition.command) {
        if (part == "{args}")
          argv.insert(argv.end(), trainer.begin() + 1, trainer.end());
        else
          argv.push_back(expand_part(part, np, cell.program, repetition, condition.name));
      }
      break;
  }
  return plan;
}

// Uniform in [0, n) from a 64-bit generator by rejection: the same sequence on every platform
// (std::shuffle and std::uniform_int_distribution are implementation-defined).
std::uint64_t uniform_below(std::mt19937_64& generator, std::uint64_t n) {
  const std::uint64_t limit =
      std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % n;
  std::uint64_t draw = 0;
  do draw = generator();
  while (draw >= limit);
  return draw % n;
}

}  // namespace

std::vector<RunPlan> expand_matrix(const Experiment& experiment, const ExpandOptions& options) {
  const auto cells = resolve_matrix(experiment, options);
  std::optional<std::mt19937_64> generator;
  if (experiment.order == RunOrder::Randomized) {
    const auto seed = experiment.seed ? experiment.seed : options.seed;
    if (!seed)
      throw ExperimentError(fmt::format(
          "{}: field \"order\": \"randomized\" needs a \"seed\" (scalebench run draws one)",
          experiment.source_path.string()));
    generator.emplace(*seed);
  }
  std::vector<RunPlan> plans;
  for (int repetition = 1; repetition <= experiment.repetitions; ++repetition) {
    const std::size_t block = plans.size();
    for (const auto& [cell, nps] : cells)
      for (int np : nps) plans.push_back(make_plan(experiment, cell, np, repetition, options));
    if (generator) {
      // Fisher-Yates within the repetition's block (Knuth, TAOCP vol. 2, Algorithm 3.4.2 P).
      for (std::size_t i = plans.size() - block; i > 1; --i)
        std::swap(plans[block + i - 1], plans[block + uniform_below(*generator, i)]);
    }
  }
  return plans;
}

std::string shell_join(const std::vector<std::string>& argv) { return util::shell_join(argv); }

}  // namespace scalebench::orchestrator
