#include "cli/plan_command.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <ostream>

#include "cli/numeric_flags.hpp"
#include "db/database.hpp"
#include "report/analysis/plan.hpp"
#include "report/analysis/report_assembly.hpp"
#include "report/data/load_runs.hpp"
#include "report/export/plan_export.hpp"

namespace scalebench::cli {

double parse_fraction(const std::string& text, const char* option) {
  const bool percent = !text.empty() && text.back() == '%';
  const std::string number = percent ? text.substr(0, text.size() - 1) : text;
  try {
    const double value = util::parse_real(number, {0, 1e6, true, false});
    return percent ? value / 100 : value;
  } catch (const util::NumberError&) {
    throw report::ReportError(fmt::format(
        "{} '{}': expected a fraction or a percentage > 0, e.g. 0.05 or 5%", option, text));
  }
}

void declare_plan_options(CLI::App& app, PlanCommand& options) {
  add_database_option(app, options.database);
  add_instance_options(app, options.experiment, options.instances, options.pool);
  add_skip_epochs_option(app, options.skip_epochs);
  app.add_option("--precision", options.precision,
                 "The confidence interval's half-width as a fraction of each cell's mean (0.02 or "
                 "2%): the runs each cell needs for it")
      ->capture_default_str();
  app.add_option("--detect", options.detect,
                 "A difference in mean epoch time, as a fraction of the base's mean (0.05 or 5%): "
                 "the runs per cell to detect it against --base (required with it)");
  app.add_option("--power", options.power, "Of --detect's tests [0.8]")
      ->transform(real_in({0, 1, true, true}));
  app.add_option("--confidence", options.confidence,
                 "Of the intervals; the tests' significance level is 1 - confidence")
      ->transform(real_in({0, 1, true, true}))
      ->capture_default_str();
  app.add_option("--base", options.base,
                 "The base row's label, as report's --base (e.g. \"mpirun np=1\")");
  app.add_option("--format", options.format, "Output format")
      ->check(CLI::IsMember(report::plan_formats()))
      ->capture_default_str();
}

int plan_command(const PlanCommand& options, std::ostream& out, std::ostream&) {
  report::PlanOptions plan_options;
  plan_options.precision = parse_fraction(options.precision, "--precision");
  if (options.detect) {
    if (!options.base)
      throw report::ReportError(
          "--detect needs --base: the row the difference is measured from and every other row "
          "is compared with (e.g. --base \"mpirun np=1\"; `scalebench report` lists the rows)");
    plan_options.detect = parse_fraction(*options.detect, "--detect");
  } else if (options.power) {
    throw report::ReportError("--power applies to --detect's tests: give --detect and --base");
  }
  plan_options.power = options.power.value_or(0.8);
  plan_options.confidence = options.confidence;
  // Options are checked before the database is opened (read-only: never written).
  report::check_plan_options(plan_options);
  const auto database = db::Database::open(options.database, db::OpenMode::ReadOnly);
  const report::InstanceQuery query{options.experiment, options.instances, options.pool,
                                    options.skip_epochs};
  const auto set = report::load_runs(database, query);
  const auto table = report::report_of(set, options.base, "run", "tukey");
  auto plan = report::plan_of(table, plan_options);
  plan.notes.insert(plan.notes.end(), set.notes.begin(), set.notes.end());
  plan.notes.insert(plan.notes.end(), set.failures.begin(), set.failures.end());
  out << report::render_plan(plan, options.format);
  return 0;
}

}  // namespace scalebench::cli
