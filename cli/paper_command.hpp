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
  // With --model: which series and how the network is fitted (scalebench model's options).
  std::optional<std::string> model_condition;
  std::vector<std::string> model_only;  // FACTOR=LEVEL
  bool network_per_np = false;
  double allreduce_window = 0;
  std::optional<int> digits;        // significant figures of the LaTeX tables
  std::optional<std::string> size;  // the figures' WxH in inches; default: the text width
  double font_size = 9;             // the figures' text, in points
  std::optional<std::string> title;
  std::optional<std::string> output;  // the directory; default: results/paper-<experiment>
};
void declare_paper_options(CLI::App& app, PaperCommand& options);
int paper_command(const PaperCommand& options, std::ostream& out, std::ostream& err);

}  // namespace scalebench::cli
