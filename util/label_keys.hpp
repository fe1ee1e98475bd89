// The report columns a "labels" entry or --label may rename, in the report's column order. Here
// so that the experiment reader (orchestrator) and the report agree on them without either
// reaching the other (docs/report.md, "Labels").
#pragma once

#include <string_view>

namespace scalebench::util {

inline constexpr std::string_view kLabelColumns[] = {
    "condition",         "epoch_time", "sd",         "tukey",         "letters",
    "images_per_second", "speedup",    "efficiency", "test_accuracy", "stop"};

}  // namespace scalebench::util
