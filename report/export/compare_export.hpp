// `scalebench compare` rendered: the aligned text table, or the JSON document (keys in the order
// documented in docs/statistics.md, written through report/export/json.hpp).
#pragma once

#include <string>

#include "report/analysis/compare.hpp"
#include "report/export/json.hpp"

namespace scalebench::report {

std::string render_comparison_text(const Comparison& comparison);
Json comparison_json(const Comparison& comparison);

}  // namespace scalebench::report
