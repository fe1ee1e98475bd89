// The report of loaded input (report/data/report_input.hpp): the table or the factor report with
// the input's notes (instances used, warm-up, failed runs), its provenance, and for report --by
// the allreduce bandwidth per level.
#pragma once

#include <string>

#include "report/analysis/report.hpp"
#include "report/data/report_input.hpp"

namespace scalebench::report {

// `unit`: what one sample is (report.hpp, unit_names()).
ReportTable report_of(const ReportInput& input,
                      const std::string& unit = std::string(kDefaultUnit));
// The same, in blocks by a factor of the experiment file (report --by FACTOR); the input's base is
// a row label without the factor ("hvd np=1"). The input needs its allreduce runs for the
// bandwidth rows.
FactorReport factor_report_of(const ReportInput& input, const std::string& factor,
                              const std::string& unit = std::string(kDefaultUnit));

}  // namespace scalebench::report
