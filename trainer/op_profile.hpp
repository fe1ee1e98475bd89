// --profile-ops: where a training step's time goes, operation by operation. The backends time
// (Model::take_op_times: the host clock around each oneDNN call, CUDA events around each device
// operation); this file adds up the nodes that cost the same (model::op_costs' signature) and
// writes one Markdown table sorted by time, with each row's share of the step and its achieved
// FLOP/s (products) or bytes/s (everything else). docs/trainer.md, "Per-operation profile".
#pragma once

#include <string>
#include <vector>

#include "trainer/backend.hpp"
#include "trainer/model/op_cost.hpp"

namespace scalebench::trainer {

struct OpProfileRow {
  std::string operation;          // the signature, or "input copy", "loss", "optimizer step"
  int nodes = 0;                  // how many graph nodes the row adds up
  double forward_seconds = 0.0;   // per step
  double backward_seconds = 0.0;  // per step
  double flops = 0.0;             // per step, forward + backward
  double bytes = 0.0;             // per step, forward + backward
  double seconds() const { return forward_seconds + backward_seconds; }
};

// The rows, slowest first (ties: first in the graph first). Throws std::invalid_argument when
// the times and the costs are not of the same graph, or no step was timed.
std::vector<OpProfileRow> op_profile_rows(const OpTimes& times,
                                          const std::vector<model::OpCost>& costs);

// "12.3 TFLOP/s", "456 GB/s", or "" when the row has neither count.
std::string achieved_rate(const OpProfileRow& row);

// The table: a title line naming `context` (model, batch, backend, precision), the steps and the
// clock; then the rows; then a line comparing their sum with `step_seconds`, the loop's own mean
// step on the host clock (0: not known).
std::vector<std::string> format_op_profile(const std::string& context, const OpTimes& times,
                                           const std::vector<model::OpCost>& costs,
                                           double step_seconds);

}  // namespace scalebench::trainer
