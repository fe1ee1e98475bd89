// What `scalebench model` prints and draws: the fitted parameters and the predicted table
// (plotting/scaling_plan.hpp) in every report format, and the figure of predicted curves with
// their bands over the measured points.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plotting/figure.hpp"
#include "plotting/scaling_plan.hpp"

namespace scalebench::plotting {

// markdown (default), csv, json, latex, html.
const std::vector<std::string>& scaling_plan_formats();
// Throws ReportError naming the formats unless `format` is one of them.
void require_scaling_plan_format(std::string_view format);
// The plan as text in `format`; `svg` (a rendered figure) goes inline into html. Throws
// ReportError naming the formats for an unknown one.
std::string format_scaling_plan(const ScalingPlan& plan, std::string_view format,
                                const std::optional<std::string>& svg = std::nullopt);

// Efficiency and images/s against np (log2): the prediction, its band, measured points (those
// held out marked apart). Files and guarantees as plot_scaling (figure.hpp).
std::string scaling_plan_data(const ScalingPlan& plan);
std::string scaling_plan_script(const ScalingPlan& plan, const FigureFiles& files);
FigureFiles plot_scaling_plan(const ScalingPlan& plan, const std::filesystem::path& prefix);

}  // namespace scalebench::plotting
