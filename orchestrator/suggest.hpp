// "Did you mean" for mistyped names (subcommands, experiment fields).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scalebench::orchestrator {

// Levenshtein distance.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The closest candidate within a distance that still looks like a typo, if any.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

}  // namespace scalebench::orchestrator
