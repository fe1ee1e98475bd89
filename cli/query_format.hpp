// Printing query results: an aligned table for people, CSV for tools.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "db/database.hpp"
#include "util/text.hpp"

namespace scalebench::cli {

// util::escape_controls (util/text.hpp): control and bidi characters as visible escapes.
using util::escape_controls;

// NULL shows as "NULL"; control characters are always escaped (the table is for people).
std::string format_aligned(const db::QueryResult& result);
// RFC 4180; NULL is an empty field; with escape_controls, each field goes through
// escape_controls first (for a terminal: `scalebench query --csv` on a tty).
std::string format_csv(const db::QueryResult& result, bool escape_controls = false);

// The aligned table built row by row: the widths need every row, so the rows are kept (as the
// escaped cells, nothing else) and held_bytes() says how much memory they take, for the caller to
// bound. write() prints the table line by line, without building it as one string.
class AlignedTable {
 public:
  explicit AlignedTable(const std::vector<std::string>& columns);
  void add(const std::vector<std::optional<std::string>>& row);
  std::size_t rows() const { return rows_; }
  // Heap bytes of the kept cells (what a string of that capacity costs malloc, deque blocks).
  std::size_t held_bytes() const { return held_; }
  void write(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::size_t> widths_;
  std::deque<std::string> cells_;  // row-major; a deque grows without copying what it holds
  std::size_t rows_ = 0;
  std::size_t held_ = 0;
};

// One CSV record (RFC 4180, "\r\n"-terminated) appended to `out`: the header or a row.
void append_csv_record(std::string& out, const std::vector<std::string>& fields, bool escape);
void append_csv_record(std::string& out, const std::vector<std::optional<std::string>>& fields,
                       bool escape);

}  // namespace scalebench::cli
