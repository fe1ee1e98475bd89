#include "trainer/op_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace scalebench::trainer {

std::vector<OpProfileRow> op_profile_rows(const OpTimes& times,
                                          const std::vector<model::OpCost>& costs) {
  if (times.nodes.size() != costs.size()) {
    throw std::invalid_argument(
        fmt::format("op profile: {} timed nodes but {} costed", times.nodes.size(), costs.size()));
  }
  if (times.steps <= 0) throw std::invalid_argument("op profile: no training step was timed");
  const auto steps = static_cast<double>(times.steps);
  std::vector<OpProfileRow> rows;
  std::map<std::string, std::size_t> row_of;  // signature -> index in rows
  auto add_fixed = [&](const char* name, double forward, double backward) {
    if (forward + backward <= 0) return;
    rows.push_back(OpProfileRow{name, 0, forward / steps, backward / steps, 0.0, 0.0});
  };
  add_fixed("input copy to the device", times.nodes.empty() ? 0.0 : times.nodes[0].forward, 0.0);
  for (std::size_t i = 1; i < costs.size(); ++i) {
    const model::OpCost& cost = costs[i];
    auto [it, fresh] = row_of.emplace(cost.signature, rows.size());
    if (fresh) rows.push_back(OpProfileRow{cost.signature});
    OpProfileRow& row = rows[it->second];
    ++row.nodes;
    row.forward_seconds += times.nodes[i].forward / steps;
    row.backward_seconds += times.nodes[i].backward / steps;
    row.flops += cost.forward_flops + cost.backward_flops;
    row.bytes += cost.forward_bytes + cost.backward_bytes;
  }
  add_fixed("loss (softmax cross-entropy)", times.loss, 0.0);
  add_fixed("optimizer step", 0.0, times.optimizer);
  std::stable_sort(rows.begin(), rows.end(), [](const OpProfileRow& a, const OpProfileRow& b) {
    return a.seconds() > b.seconds();
  });
  return rows;
}

std::string achieved_rate(const OpProfileRow& row) {
  const double seconds = row.seconds();
  if (seconds <= 0) return "";
  // Products are judged by arithmetic, the rest by memory traffic (the two roofline limits).
  if (row.flops > 0) {
    const double rate = row.flops / seconds;
    return rate >= 1e12 ? fmt::format("{:.1f} TFLOP/s", rate / 1e12)
                        : fmt::format("{:.1f} GFLOP/s", rate / 1e9);
  }
  if (row.bytes > 0) return fmt::format("{:.1f} GB/s", row.bytes / seconds / 1e9);
  return "";
}

std::vector<std::string> format_op_profile(const std::string& context, const OpTimes& times,
                                           const std::vector<model::OpCost>& costs,
                                           double step_seconds) {
  const std::vector<OpProfileRow> rows = op_profile_rows(times, costs);
  double total = 0.0, forward = 0.0, backward = 0.0, flops = 0.0;
  for (const OpProfileRow& row : rows) {
    total += row.seconds();
    forward += row.forward_seconds;
    backward += row.backward_seconds;
    flops += row.flops;
  }
  std::vector<std::string> lines;
  lines.push_back(fmt::format(
      "Per-operation profile: {} steps={} clock={} (milliseconds per step; nodes of one shape "
      "added up)",
      context, times.steps, times.clock));
  lines.emplace_back("");
  lines.emplace_back(
      "| # | operation | nodes | ms/step | share | cumulative | forward ms | backward ms | "
      "achieved |");
  lines.emplace_back("| ---: | :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  double cumulative = 0.0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const OpProfileRow& row = rows[r];
    const double share = total > 0 ? row.seconds() / total : 0.0;
    cumulative += share;
    lines.push_back(
        fmt::format("| {} | {} | {} | {:.3f} | {:.1f}% | {:.1f}% | {:.3f} | {:.3f} | {} |", r + 1,
                    row.operation, row.nodes == 0 ? "" : fmt::to_string(row.nodes),
                    row.seconds() * 1e3, share * 100, cumulative * 100, row.forward_seconds * 1e3,
                    row.backward_seconds * 1e3, achieved_rate(row)));
  }
  OpProfileRow all{"all operations", 0, forward, backward, flops, 0.0};
  lines.push_back(fmt::format("| | {} | | {:.3f} | 100.0% | | {:.3f} | {:.3f} | {} |",
                              all.operation, total * 1e3, forward * 1e3, backward * 1e3,
                              achieved_rate(all)));
  if (step_seconds > 0) {
    lines.emplace_back("");
    lines.push_back(fmt::format(
        "The loop's step (host clock, same steps): {:.3f} ms; the operations add up to {:.1f}% "
        "of it.",
        step_seconds * 1e3, total / step_seconds * 100));
  }
  return lines;
}

}  // namespace scalebench::trainer
