#include "plotting/query_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "plotting/format.hpp"
#include "util/text.hpp"

namespace scalebench::plotting {
namespace {

// Display width in code points, close enough for aligning UTF-8 text in a terminal.
std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace

std::string format_aligned(const db::QueryResult& result) {
  const auto cell = [](const std::optional<std::string>& value) {
    return value ? escape_controls(*value) : std::string("NULL");
  };
  std::vector<std::string> header;
  for (const auto& column : result.columns) header.push_back(escape_controls(column));
  std::vector<std::vector<std::string>> body;
  for (const auto& row : result.rows) {
    std::vector<std::string> cells;
    for (const auto& value : row) cells.push_back(cell(value));
    body.push_back(std::move(cells));
  }

  std::vector<std::size_t> widths;
  for (const auto& column : header) widths.push_back(display_width(column));
  for (const auto& row : body)
    for (std::size_t i = 0; i < row.size(); ++i)
      widths[i] = std::max(widths[i], display_width(row[i]));

  std::string out;
  const auto append_row = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < widths.size(); ++i) {
      out += cells[i];
      if (i + 1 < widths.size()) out += std::string(widths[i] - display_width(cells[i]) + 2, ' ');
    }
    out += '\n';
  };
  append_row(header);
  std::vector<std::string> rule;
  for (const auto width : widths) rule.emplace_back(width, '-');
  append_row(rule);
  for (const auto& row : body) append_row(row);
  out += fmt::format("({} row{})\n", result.rows.size(), result.rows.size() == 1 ? "" : "s");
  return out;
}

std::string format_csv(const db::QueryResult& result, bool escape) {
  const auto field = [&](const std::string& text) {
    return plotting::csv_field(escape ? escape_controls(text) : text);
  };
  std::string out;
  for (std::size_t i = 0; i < result.columns.size(); ++i)
    out += (i ? "," : "") + field(result.columns[i]);
  out += "\r\n";
  for (const auto& row : result.rows) {
    for (std::size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + field(row[i].value_or(""));
    out += "\r\n";
  }
  return out;
}

}  // namespace scalebench::plotting
