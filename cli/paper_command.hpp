// `scalebench paper`: the whole bundle of one or several experiments in a directory: each
// experiment's table (and --by table) as LaTeX, its figures as PDF, the scaling model where
// asked, a provenance appendix and a main.tex that compiles; the same as one HTML page
// (report/export/paper.hpp; docs/paper.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace CLI {
class App;
}

namespace scalebench::cli {

struct PaperCommand {
  std::string database = kDefaultDatabase;
  std::vector<std::string> experiments;  // default: the latest instance's
  std::optional<std::string> by;         // a factor: also the side-by-side table and figure
  std::string unit = std::string(report::kDefaultUnit);
  std::optional<std::string> base;
  std::optional<int> skip_epochs;
  std::string pairwise = "auto";    // report --pairwise
  std::vector<std::string> labels;  // --label KEY=TEXT
  bool model = false;               // the scaling model's tables and figure
  std::optional<int> fit_max_np;    // with --model: the hold-out
  // With --model: the predicted table's largest np; default 4 x the largest measured np, as a
  // power of two (scaling::default_max_np).
  std::optional<int> max_np;
  // The part of the study every table, figure and the model show (report --only, --condition).
  std::optional<std::string> condition;
  std::vector<std::string> only;  // FACTOR=LEVEL
  // With --model: how the network is fitted (scalebench model's options).
  bool network_per_np = false;
  double allreduce_window = 0;
  std::optional<int> digits;          // significant figures of each table column's smallest value
  std::vector<std::string> decimals;  // --decimals COLUMN=N: that column's decimals
  int columns = 1;                    // main.tex's layout: one column or two
  // The figures' width: column, page (the text width) or inches; default: page in one column,
  // column in two. Their height follows from the panels and the legend.
  std::optional<std::string> figure_width;
  std::optional<std::string> size;  // the figures' WxH in inches instead
  std::optional<double> font_size;  // the figures' text, in points; default: 9, 8 at a column
  bool log_y = false;               // epoch time and throughput on log axes
  std::optional<std::string> title;
  std::optional<std::string> output;  // the directory; default: results/paper-<experiment>
};
void declare_paper_options(CLI::App& app, PaperCommand& options);
int paper_command(const PaperCommand& options, std::ostream& out, std::ostream& err);

}  // namespace scalebench::cli
