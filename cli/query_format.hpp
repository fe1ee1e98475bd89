// Printing query results: an aligned table for people, CSV for tools.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "db/database.hpp"
#include "report/export/plain_table.hpp"
#include "util/text.hpp"

namespace scalebench::cli {

// util::escape_controls (util/text.hpp): control and bidi characters as visible escapes.
using util::escape_controls;

// NULL shows as "NULL"; control characters are always escaped (the table is for people).
std::string format_aligned(const db::QueryResult& result);
// RFC 4180; NULL is an empty field; with escape_controls, each field goes through
// escape_controls first (for a terminal: `scalebench query --csv` on a tty).
std::string format_csv(const db::QueryResult& result, bool escape_controls = false);

// AlignedTable and append_csv_record: report/export/plain_table.hpp.
using report::AlignedTable;
using report::append_csv_record;

}  // namespace scalebench::cli
