// The report's data from the results database: which instances (instances.hpp), their epochs,
// the table (report.hpp) with notes on what was used and which runs failed; and where a figure
// of it goes.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "db/database.hpp"
#include "plotting/instances.hpp"
#include "plotting/report.hpp"

namespace scalebench::plotting {

// The SQL that shows an allreduce benchmark experiment: mean time and bandwidth per size.
std::string allreduce_query(const std::string& experiment);

// The report table of the instances `query` selects. Throws ReportError when they hold no
// finished epoch (naming an allreduce benchmark's query, or the runs to look at).
// `unit`: what one sample is (report.hpp, unit_names()).
ReportTable load_report(const db::Database& database, const InstanceQuery& query,
                        const std::optional<std::string>& base,
                        const std::string& unit = std::string(kDefaultUnit));

// The same, in blocks by a factor of the experiment file (report --by FACTOR); `base` is a row
// label without the factor ("hvd np=1").
FactorReport load_factor_report(const db::Database& database, const InstanceQuery& query,
                                const std::optional<std::string>& base, const std::string& factor,
                                const std::string& unit = std::string(kDefaultUnit));

// Where `scalebench plot` writes the figure of `experiment`: <database's folder>/<name>-scaling
// by default; `output` names a prefix, or a folder (ending in '/' or existing) to put it in.
std::filesystem::path figure_prefix(const std::string& database_path, const std::string& experiment,
                                    const std::optional<std::string>& output);

}  // namespace scalebench::plotting
