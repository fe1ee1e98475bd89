// Tables of plain cells, for whatever prints rows that are not a report's table (those have
// their exporters, exporters.hpp): an aligned table for people (query, run --dry-run), Markdown,
// HTML and LaTeX tables (the scaling model's tables, its presets and published studies) and CSV
// records.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace scalebench::report {

// The aligned table built row by row: the widths need every row, so the rows are kept (as the
// escaped cells, nothing else) and held_bytes() says how much memory they take, for the caller to
// bound. write() prints the table line by line, without building it as one string. Control
// characters in cells are escaped (util::escape_controls); an absent cell shows as "NULL".
class AlignedTable {
 public:
  // Query: a rule under the header and "(N rows)" at the end. Plain: header and rows only.
  enum class Layout { Query, Plain };
  explicit AlignedTable(const std::vector<std::string>& columns);
  void add(const std::vector<std::optional<std::string>>& row);
  void add(const std::vector<std::string>& row);
  std::size_t rows() const { return rows_; }
  // Heap bytes of the kept cells (what a string of that capacity costs malloc, deque blocks).
  std::size_t held_bytes() const { return held_; }
  void write(std::ostream& out, Layout layout = Layout::Query) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::size_t> widths_;
  std::deque<std::string> cells_;  // row-major; a deque grows without copying what it holds
  std::size_t rows_ = 0;
  std::size_t held_ = 0;
};

// A Markdown table: `columns` with their alignment ('l' or 'r' per column, left when absent), then
// the rows, each cell through markdown_cell (markup.hpp).
std::string markdown_table(const std::vector<std::string>& columns, std::string_view alignment,
                           const std::vector<std::vector<std::string>>& rows);

// The same as an HTML <table> (thead, tbody; cells escaped) and as a booktabs tabular (cells
// through tex(); `alignment` as for Markdown), for tables that are not a report's.
std::string html_table(const std::vector<std::string>& columns,
                       const std::vector<std::vector<std::string>>& rows);
std::string latex_tabular(const std::vector<std::string>& columns, std::string_view alignment,
                          const std::vector<std::vector<std::string>>& rows);

// One CSV record (RFC 4180, "\r\n"-terminated) appended to `out`: the header or a row; with
// `escape`, each field goes through util::escape_controls first.
void append_csv_record(std::string& out, const std::vector<std::string>& fields, bool escape);
void append_csv_record(std::string& out, const std::vector<std::optional<std::string>>& fields,
                       bool escape);

}  // namespace scalebench::report
