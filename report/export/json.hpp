// The one way plotting writes JSON (report tables, statistics): nlohmann's ordered_json, keys in
// the order written, two-space indentation, numbers in the shortest form that reads back as the
// same double, NaN and infinities as null, invalid UTF-8 replaced by U+FFFD rather than thrown.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace scalebench::report {

using Json = nlohmann::ordered_json;

inline Json optional_number(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

inline std::string dump_json(const Json& document) {
  return document.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace scalebench::report
