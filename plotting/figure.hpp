// The scaling figure: epoch time and throughput against np, rendered by gnuplot to SVG and PNG.
// The data file and the gnuplot script are kept next to the images so users can edit and re-run
// them (`cd <dir> && gnuplot <name>.gp`). What is drawn: docs/report.md.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "report/analysis/report.hpp"
#include "scaling/plan.hpp"

namespace scalebench::plotting {

struct FigureFiles {
  std::filesystem::path svg;
  std::filesystem::path png;
  std::filesystem::path pdf;
  std::filesystem::path data;    // gnuplot data blocks, one per series
  std::filesystem::path script;  // the gnuplot script that renders both images
};

// prefix + ".svg", ".png", ".pdf", ".dat", ".gp" (the prefix's own dots are kept: "out/run-1.2").
FigureFiles figure_files(const std::filesystem::path& output_prefix);

// The text of the data file and of the script for `files` (pure; plot_scaling writes them).
std::string scaling_data(const report::ReportTable& table);
std::string scaling_script(const report::ReportTable& table, const FigureFiles& files);

// Writes the data file and script (creating the prefix's directory), runs gnuplot on the script and
// returns the four paths. Everything is made in a private directory beside the targets and renamed
// over them, so a symlink planted at one of the four names is replaced, never written through.
// Throws report::ReportError when the table has no rows, when gnuplot is missing, or when it fails
// (the message carries gnuplot's stderr).
FigureFiles plot_scaling(const report::ReportTable& table,
                         const std::filesystem::path& output_prefix);

// Figure 2 of HorovodRunner's study (plot --by FACTOR): scaling efficiency, mean epoch time and
// images/s against np, one curve per level of the factor (and launched condition), error bars of
// +-1 SD of the run-to-run spread, the ideal (linear scaling) lines; single-process rows as
// markers. Same files and guarantees as plot_scaling.
std::string factor_scaling_data(const report::FactorReport& report);
std::string factor_scaling_script(const report::FactorReport& report, const FigureFiles& files);
FigureFiles plot_factor_scaling(const report::FactorReport& report,
                                const std::filesystem::path& output_prefix);

// Where `scalebench plot` writes the figure of `experiment`: <database's folder>/<name>-scaling
// by default; `output` names a prefix, or a folder (ending in '/' or existing) to put it in.
std::filesystem::path figure_prefix(const std::string& database_path, const std::string& experiment,
                                    const std::optional<std::string>& output);

// The scaling model's figure (scalebench model --plot, plot --model): efficiency and images/s
// against np (log2): the prediction, its band, measured points (those held out marked apart). Files
// and guarantees as plot_scaling (figure.hpp).
std::string scaling_plan_data(const scaling::ScalingPlan& plan);
std::string scaling_plan_script(const scaling::ScalingPlan& plan, const FigureFiles& files);
FigureFiles plot_scaling_plan(const scaling::ScalingPlan& plan,
                              const std::filesystem::path& prefix);

}  // namespace scalebench::plotting
