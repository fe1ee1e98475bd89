// The report: epoch samples of one experiment turned into a Table-1-style table (one row per
// condition x launcher x np), and the exporters that render it. Column definitions and formulas:
// docs/report.md.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "db/database.hpp"
#include "util/error.hpp"

namespace scalebench::plotting {

// Input the report cannot be built or rendered from; the message says what to do.
class ReportError : public Error {
 public:
  using Error::Error;
};

// One row of the table: the epochs of all runs with the same condition, launcher and np.
struct ReportRow {
  std::string label;  // group_label(condition, launcher, np), unique within a table
  std::string condition;
  std::string launcher;
  int np = 1;
  std::size_t runs = 0;    // distinct runs contributing epochs
  std::size_t epochs = 0;  // epochs (the unit of analysis)
  double mean_epoch_seconds = 0;
  std::optional<double> sd_epoch_seconds;    // sample SD (n - 1); absent for one epoch
  std::optional<double> tukey_p_vs_base;     // Tukey-Kramer adjusted p; absent for the base row
  std::optional<double> images_per_second;   // sum(train_images) / sum(duration)
  std::optional<double> speedup_vs_base;     // base mean / row mean
  std::optional<double> scaling_efficiency;  // a fraction (1 = linear scaling), see docs
  bool is_base = false;
};

struct AnovaSummary {
  double f = 0;
  double df_between = 0;
  double df_within = 0;
  double p = 1;
};

struct ReportTable {
  std::string experiment;
  std::string base_label;
  std::string unit = "epoch";  // what one sample is
  std::vector<ReportRow> rows;
  std::optional<AnovaSummary> anova;  // absent with fewer than two groups
  std::vector<std::string> notes;     // caveats and why a statistic is absent, for readers
};

struct ReportOptions {
  std::optional<std::string> base_label;  // default: first non-single np=1 group, else the first
};

// "<condition>" for launcher "single", else "<condition> np=<np>".
std::string group_label(std::string_view condition, std::string_view launcher, int np);

// Groups the samples of `experiment` (samples of other experiments are ignored) by
// (condition, launcher, np) in order of first appearance and computes every column.
// Throws ReportError when there is no sample or base_label names no group.
ReportTable build_report(std::string experiment, const std::vector<db::EpochSample>& samples,
                         const ReportOptions& options = {});

// One implementation per output format.
class TableExporter {
 public:
  virtual ~TableExporter();
  virtual std::string render(const ReportTable& table) const = 0;
};

// "markdown", "csv" or "json"; anything else throws ReportError naming the known formats.
std::unique_ptr<TableExporter> make_exporter(std::string_view format);
std::vector<std::string> exporter_names();

}  // namespace scalebench::plotting
