// `scalebench plan` rendered: aligned text, a Markdown table, or the JSON document (numbers at
// full precision, keys as docs/statistics.md's "Planning from a pilot" lists them).
#pragma once

#include <string>
#include <vector>

#include "report/analysis/plan.hpp"
#include "report/export/json.hpp"

namespace scalebench::report {

inline const std::vector<std::string>& plan_formats() {
  static const std::vector<std::string> formats = {"text", "markdown", "json"};
  return formats;
}

// `format`: one of plan_formats(); throws ReportError otherwise.
std::string render_plan(const Plan& plan, const std::string& format);
Json plan_json(const Plan& plan);

}  // namespace scalebench::report
