// The report of a RunSet (report/data/run_set.hpp): the table or the factor report with the
// set's notes (instances used, warm-up, failed runs), its provenance, and for report --by the
// allreduce bandwidth per level.
#pragma once

#include <optional>
#include <string>

#include "report/analysis/report.hpp"
#include "report/data/run_set.hpp"

namespace scalebench::report {

// `base`: the base row's label, as given (--base); `unit`: what one observation is (report.hpp,
// unit_names()).
// `pairwise`: ReportOptions::pairwise.
ReportTable report_of(const RunSet& set, const std::optional<std::string>& base = std::nullopt,
                      const std::string& unit = std::string(kDefaultUnit),
                      const std::string& pairwise = "auto");
// The same, in blocks by a factor of the experiment file (report --by FACTOR); the base is a row
// label without the factor ("hvd np=1"). The set needs its allreduce runs for the bandwidth rows.
FactorReport factor_report_of(const RunSet& set, const std::string& factor,
                              const std::optional<std::string>& base = std::nullopt,
                              const std::string& unit = std::string(kDefaultUnit),
                              const std::string& pairwise = "auto");

// The --by blocks' base: a row label without the factor's level ("hvd model=vgg16 np=1" ->
// "hvd np=1"), so that one --base serves the table and its blocks.
std::optional<std::string> base_without_factor(const std::optional<std::string>& base,
                                               const std::string& factor);

}  // namespace scalebench::report
