// `scalebench plan`: planning from a pilot. From a finished instance, the runs each cell needs for
// a precision of its mean, and with --detect and --base the runs per cell to detect that
// difference from the base (report/analysis/plan.hpp; docs/statistics.md, "Planning from a
// pilot"). Reads the database read-only.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace scalebench::cli {

struct PlanCommand {
  std::string database = kDefaultDatabase;
  std::optional<std::string> experiment;
  std::vector<std::int64_t> instances;
  bool pool = false;
  std::optional<int> skip_epochs;
  std::string precision = "2%";       // a fraction or a percentage
  std::optional<std::string> detect;  // a fraction or a percentage
  std::optional<double> power;        // default 0.8; only with --detect
  double confidence = 0.95;
  std::optional<std::string> base;
  std::string format = "text";
};

// "5%" -> 0.05, "0.05" -> 0.05; throws ReportError naming `option` for anything else.
double parse_fraction(const std::string& text, const char* option);

void declare_plan_options(CLI::App& app, PlanCommand& options);
int plan_command(const PlanCommand& options, std::ostream& out, std::ostream& err);

}  // namespace scalebench::cli
