// Printing query results: an aligned table for people, CSV for tools.
#pragma once

#include <string>
#include <string_view>

#include "db/database.hpp"

namespace scalebench::plotting {

// `text` with every character that could move the cursor, recolour or retitle a terminal shown
// as a visible escape: C0 controls (tab and newline included) and DEL as \x1b, C1 controls
// (U+0080..U+009F) and the bidirectional overrides (U+202A..U+202E, U+2066..U+2069) as \u009b,
// and bytes that are not UTF-8 as \xff. Everything else, backslashes included, is kept.
std::string escape_controls(std::string_view text);

// NULL shows as "NULL"; control characters are always escaped (the table is for people).
std::string format_aligned(const db::QueryResult& result);
// RFC 4180; NULL is an empty field; with escape_controls, each field goes through
// escape_controls first (for a terminal: `scalebench query --csv` on a tty).
std::string format_csv(const db::QueryResult& result, bool escape_controls = false);

}  // namespace scalebench::plotting
