// Printing query results: an aligned table for people, CSV for tools.
#pragma once

#include <string>

#include "db/database.hpp"

namespace scalebench::cli {

std::string format_aligned(const db::QueryResult& result);  // NULL shows as "NULL"
std::string format_csv(const db::QueryResult& result);      // RFC 4180; NULL is an empty field

}  // namespace scalebench::cli
