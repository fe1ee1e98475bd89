#include "report/data/samples.hpp"

#include <fmt/format.h>

namespace scalebench::report {

std::string group_label(std::string_view condition, std::string_view launcher, int np,
                        const FactorLevels& levels) {
  std::string out(condition);
  for (const auto& [factor, level] : levels) out += fmt::format(" {}={}", factor, level);
  if (launcher == "single") return out;
  return fmt::format("{} np={}", out, np);
}

}  // namespace scalebench::report
