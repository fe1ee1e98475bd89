// `scalebench report`: the paper-style table of an experiment's stored runs
// (report/analysis/report.hpp) in one of the exporters' formats.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace scalebench::cli {

struct ReportCommand : ReportSourceOptions {
  std::string format = "markdown";
  std::optional<std::string> output;  // default: stdout
  std::optional<std::string> by;      // a factor: one column block per level (Table 2)
  std::optional<int> digits;          // significant figures of each column's smallest value
  std::vector<std::string> decimals;  // --decimals COLUMN=N: that column's decimals
  std::string pairwise = "auto";      // ReportOptions::pairwise
};
void declare_report_options(CLI::App& app, ReportCommand& options);
int report_command(const ReportCommand& options, std::ostream& out, std::ostream& err);

}  // namespace scalebench::cli
