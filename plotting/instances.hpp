// Which experiment instances a report, figure or statistic is built from (docs/report.md).
// Each `scalebench run` is an instance; by default the latest one is used, and instances are
// pooled only when asked and only when their specs are identical.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"

namespace scalebench::plotting {

struct InstanceQuery {
  std::optional<std::string> experiment;  // a name; default: the latest instance's
  std::vector<std::int64_t> instances;    // explicit instance ids (pooled when several)
  bool pool = false;                      // every instance of the name
};

struct InstanceSelection {
  std::string experiment;          // the name
  std::vector<std::int64_t> ids;   // oldest first
  std::vector<std::string> notes;  // what was used (and pooled), for the report's notes
};

// Throws ReportError: nothing stored, an unknown name or id, instances of different names, or
// instances whose specs differ (the message names the differing instances and JSON paths).
InstanceSelection select_instances(const db::Database& database, const InstanceQuery& query);

// Notes on runs that are not ok, per condition and np: conditions none of whose runs are ok would
// otherwise vanish from a table without a word.
std::vector<std::string> failure_notes(const std::vector<db::RunRecord>& runs);

}  // namespace scalebench::plotting
