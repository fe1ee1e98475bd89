// The runs of a measured scaling plan from the results database (report/data/load_runs.hpp):
// the training experiment's runs with their trainer headers and allreduce runs, filtered by the
// options' condition and --only levels, and another experiment's allreduce runs when
// --allreduce-experiment names one. The CLI calls this; scaling/plan.hpp sees the RunSets only.
#pragma once

#include "db/database.hpp"
#include "scaling/plan.hpp"

namespace scalebench::scaling {

ScalingRuns load_scaling_runs(const db::Database& database, const ScalingPlanOptions& options);

// The options checked, the runs loaded (measured mode) and the plan built.
ScalingPlan build_scaling_plan(const db::Database& database, const ScalingPlanOptions& options);

}  // namespace scalebench::scaling
