// `scalebench model`: fit the scaling model to an experiment's training and allreduce runs (or
// set it up from network presets) and predict to np 1024 with intervals (docs/scaling-model.md).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "scaling/plan.hpp"

namespace scalebench::cli {

struct ModelCommand {
  std::string database = kDefaultDatabase;
  std::optional<std::string> experiment;
  std::vector<std::int64_t> instances;
  bool pool = false;
  std::optional<std::string> allreduce_experiment;
  std::vector<std::string> only;  // FACTOR=LEVEL
  scaling::ScalingPlanOptions plan;
  std::string format = "markdown";
  std::optional<std::string> output;       // default: stdout
  std::optional<std::string> plot_prefix;  // draw the figure there
  bool published = false;                  // the validation table against published curves
  bool list_networks = false;
};
void declare_model_options(CLI::App& app, ModelCommand& options);
int model_command(const ModelCommand& options, std::ostream& out, std::ostream& err);

}  // namespace scalebench::cli
