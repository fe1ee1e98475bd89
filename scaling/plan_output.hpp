// What `scalebench model` prints: the fitted parameters and the predicted table
// (scaling/plan.hpp) in every report format (its figure: plotting/figure.hpp), and its two
// reference tables (the network presets, the published studies).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scaling/plan.hpp"

namespace scalebench::scaling {

// markdown (default), csv, json, latex, html.
const std::vector<std::string>& scaling_plan_formats();
// Throws report::ReportError naming the formats unless `format` is one of them.
void require_scaling_plan_format(std::string_view format);
// The plan as text in `format`; `svg` (a rendered figure) goes inline into html. With `paper`,
// latex and html carry the notes in the paper's words (ScalingPlan::paper_notes). Throws
// report::ReportError naming the formats for an unknown one.
std::string format_scaling_plan(const ScalingPlan& plan, std::string_view format,
                                const std::optional<std::string>& svg = std::nullopt,
                                bool paper = false);

// `model --list-networks`: the network presets as a Markdown table, with their sources.
std::string network_presets_table();
// `model --validate`: the model against the published scaling studies (validation.hpp), as a
// Markdown table with a line on what the columns mean.
std::string published_validation_table();

}  // namespace scalebench::scaling
