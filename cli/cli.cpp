#include "cli/cli.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <ostream>

#include "cli/cluster_command.hpp"
#include "cli/compare_command.hpp"
#include "cli/merge_command.hpp"
#include "cli/model_command.hpp"
#include "cli/paper_command.hpp"
#include "cli/plan_command.hpp"
#include "cli/plot_command.hpp"
#include "cli/query_command.hpp"
#include "cli/report_command.hpp"
#include "cli/run_command.hpp"
#include "cli/stats_command.hpp"
#include "db/database.hpp"
#include "util/text.hpp"

namespace scalebench::cli {
namespace {

using Action = std::function<int()>;
// Declares a subcommand's options on `app` and returns what to run once they are parsed.
using Configure = std::function<Action(CLI::App& app, std::ostream& out, std::ostream& err)>;

struct Entry {
  Subcommand command;
  Configure configure;
};

// One row of the table: a subcommand whose parsed options are an `Options`, declared on its
// CLI::App by `declare` and handed to `run`.
template <typename Options>
Entry command(std::string_view name, std::string_view summary, void (*declare)(CLI::App&, Options&),
              int (*run)(const Options&, std::ostream&, std::ostream&)) {
  return {{name, summary},
          [declare, run](CLI::App& app, std::ostream& out, std::ostream& err) -> Action {
            auto options = std::make_shared<Options>();
            declare(app, *options);
            return [options, run, &out, &err] { return run(*options, out, err); };
          }};
}

struct VersionCommand {};
void declare_version_options(CLI::App&, VersionCommand&) {}
int version_command(const VersionCommand&, std::ostream& out, std::ostream&) {
  fmt::print(out, "scalebench {} (database schema {})\n", SCALEBENCH_VERSION, db::kSchemaVersion);
  return 0;
}

const std::vector<Entry>& table() {
  static const std::vector<Entry> entries = {
      command("run", "run every cell of an experiment matrix and store the measurements",
              declare_run_options, run_command),
      command(
          "report",
          "print the paper-style table: epoch times, Tukey p, images/s, ANOVA (--by: per factor)",
          declare_report_options, report_command),
      command("plot",
              "render the scaling figure (epoch time and images/s against np) as SVG, PNG and PDF",
              declare_plot_options, plot_command),
      command("paper",
              "the bundle for a paper: LaTeX tables, PDF figures, provenance, main.tex and one "
              "HTML page",
              declare_paper_options, paper_command),
      command("query", "run one read-only SQL statement on the results database",
              declare_query_options, query_command),
      command("cluster", "many nodes on one machine: network namespaces on shaped links (root)",
              declare_cluster_options, cluster_command),
      command("merge", "the runs of side files (or other databases) into a results database",
              declare_merge_options, merge_command),
      command(
          "compare",
          "two experiments, instances or databases cell by cell: ratio, CI, Welch test, verdict",
          declare_compare_options, compare_command),
      command("model",
              "fit the scaling model to training and allreduce runs (or presets) and predict to np "
              "1024",
              declare_model_options, model_command),
      command("plan",
              "from a pilot instance: runs per cell for a precision, and to detect a difference "
              "(t-test, Tukey)",
              declare_plan_options, plan_command),
      command("stats",
              "ANOVA, Tukey and more on a CSV file, the results database or summary statistics",
              declare_stats_options, stats_command),
      command("version", "print the version", declare_version_options, version_command),
  };
  return entries;
}

void print_usage(std::ostream& out) {
  fmt::print(out, "usage: scalebench COMMAND [OPTIONS]\n\ncommands:\n");
  for (const auto& entry : table())
    fmt::print(out, "  {:<9} {}\n", entry.command.name, entry.command.summary);
  fmt::print(out, "  {:<9} {}\n\n`scalebench COMMAND --help` lists a command's options.\n", "help",
             "print this list");
}

}  // namespace

const std::vector<Subcommand>& subcommands() {
  static const std::vector<Subcommand> list = [] {
    std::vector<Subcommand> out;
    for (const auto& entry : table()) out.push_back(entry.command);
    return out;
  }();
  return list;
}

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    print_usage(args.empty() ? err : out);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") return run_cli({"version"}, out, err);

  const auto& entries = table();
  const auto entry = std::find_if(entries.begin(), entries.end(),
                                  [&](const Entry& e) { return e.command.name == args[0]; });
  if (entry == entries.end()) {
    std::vector<std::string> names;
    for (const auto& e : entries) names.emplace_back(e.command.name);
    names.emplace_back("help");
    const auto suggestion = util::closest_match(args[0], names);
    fmt::print(err, "scalebench: unknown command '{}'{}; `scalebench help` lists them\n", args[0],
               suggestion ? fmt::format(", did you mean '{}'?", *suggestion) : "");
    return 2;
  }

  CLI::App app(std::string(entry->command.summary), "scalebench " + args[0]);
  const Action action = entry->configure(app, out, err);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);  // CLI11 wants them reversed
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::ParseError& error) {
    fmt::print(err, "scalebench {}: {}\n", args[0], error.what());
    return 2;
  }

  int status = 0;
  try {
    status = action();
  } catch (const std::exception& error) {
    // Every typed error derives from scalebench::Error (util/error.hpp); the standard library's
    // own (a filesystem error, say) read the same: one line, exit 1, never std::terminate.
    fmt::print(err, "scalebench: error: {}\n", error.what());
    status = 1;
  }
  // A table that never reached its reader is a failure (`report > /dev/full`): the stream
  // stays failed after the first lost write, and the final flush reports what was buffered.
  errno = 0;
  out.flush();
  if (out.fail()) {
    const int lost = errno;
    fmt::print(err, "scalebench {}: error: cannot write to standard output{}\n", args[0],
               lost != 0 ? fmt::format(": {}", std::strerror(lost)) : std::string());
    return status != 0 ? status : 1;
  }
  return status;
}

}  // namespace scalebench::cli
