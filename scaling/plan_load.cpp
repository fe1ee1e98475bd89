#include "scaling/plan_load.hpp"

#include "report/data/load_runs.hpp"

namespace scalebench::scaling {

ScalingRuns load_scaling_runs(const db::Database& database, const ScalingPlanOptions& o) {
  ScalingRuns runs;
  report::RunFilter filter;
  filter.only = o.only;
  filter.condition = o.condition;
  report::InstanceQuery training = *o.training;
  if (o.skip_epochs) training.skip_epochs = o.skip_epochs;
  runs.training =
      report::load_runs(database, training, filter, {.allreduce_runs = true, .headers = true});
  if (o.allreduce) {
    // Its allreduce runs only: --condition names a training condition, and a --only factor it
    // lacks keeps its runs (runs with the factor at another level are left out).
    report::RunFilter levels;
    levels.only = o.only;
    runs.allreduce = report::load_runs(database, *o.allreduce, levels,
                                       {.allreduce_runs = true, .require_epochs = false});
  }
  return runs;
}

ScalingPlan build_scaling_plan(const db::Database& database, const ScalingPlanOptions& o) {
  check_scaling_options(o);
  if (!o.training) return build_scaling_plan(nullptr, o);
  const auto runs = load_scaling_runs(database, o);
  return build_scaling_plan(&runs, o);
}

}  // namespace scalebench::scaling
