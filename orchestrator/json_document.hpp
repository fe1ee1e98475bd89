// The experiment file's JSON, read so that every hostile file gives one clear line: a depth limit
// enforced before a deeper level exists, repeated keys refused, errors naming the field's path and
// the position in the file. Used by the experiment reader (orchestrator/experiment.cpp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace scalebench::orchestrator {

// Text from the file as it may appear inside a one-line message: printable ASCII, anything else
// escaped, at most `limit` characters.
std::string printable(std::string_view text, std::size_t limit = 40);
// One step of a field path: `.key` when the key is a plain word, else `["key"]` escaped.
std::string path_step(std::string_view parent, std::string_view key);
// A path for a message: long ones (64 levels) keep their start and end.
std::string shown_path(const std::string& path);

// The document of `text` (read from `path`, named in errors). Throws ExperimentError.
nlohmann::json parse_json_document(const std::string& text, const std::filesystem::path& path);

}  // namespace scalebench::orchestrator
