// The report's data from the results database: which instances (instances.hpp), their epochs
// after warm-up, notes on what was used and which runs failed, the merged provenance, the
// experiment file's order of conditions and levels, and (for report --by) the allreduce benchmark
// runs. report/analysis/report_assembly.hpp turns it into the table.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "db/database.hpp"
#include "report/data/instances.hpp"
#include "report/data/labels.hpp"
#include "report/data/samples.hpp"
#include "report/error.hpp"

namespace scalebench::report {

// An ok allreduce benchmark run of the selected instances, with its rows.
struct AllreduceRun {
  db::RunRecord run;
  std::vector<db::AllreduceRecord> rows;
};

struct ReportInput {
  InstanceSelection selection;
  std::vector<EpochSample> samples;   // ok runs' epochs, warm-up left out
  std::vector<std::string> failures;  // failure_notes of the instances' runs
  std::optional<std::string> base;    // the base row's label, as given
  // The experiment file's order (from the first selected instance's record); empty when unread.
  std::vector<std::string> condition_order;
  std::vector<std::pair<std::string, std::vector<std::string>>> level_order;
  Labels labels;  // the experiment file's "labels" (first selected instance)
  Provenance provenance;
  std::vector<AllreduceRun> allreduce_runs;  // only when asked for
};

// The SQL that shows an allreduce benchmark experiment: mean time and bandwidth per size.
std::string allreduce_query(const std::string& experiment);

// The input of the instances `query` selects. Throws ReportError when they hold no finished
// epoch (naming an allreduce benchmark's query, or the runs to look at). `allreduce_runs`: also
// load the ok allreduce benchmark runs (the bandwidth beside a factor report's blocks).
ReportInput load_report_input(const db::Database& database, const InstanceQuery& query,
                              const std::optional<std::string>& base, bool allreduce_runs = false);

}  // namespace scalebench::report
