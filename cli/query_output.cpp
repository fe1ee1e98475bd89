#include "cli/query_output.hpp"

#include "plotting/format.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace scalebench::cli {
namespace {

// Display width in code points, close enough for aligning UTF-8 text in a terminal.
std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace

std::string format_aligned(const db::QueryResult& result) {
  std::vector<std::size_t> widths;
  for (const auto& column : result.columns) widths.push_back(display_width(column));
  for (const auto& row : result.rows)
    for (std::size_t i = 0; i < row.size(); ++i)
      widths[i] = std::max(widths[i], display_width(row[i].value_or("NULL")));

  std::string out;
  const auto append_row = [&](auto cell_of) {
    for (std::size_t i = 0; i < widths.size(); ++i) {
      const std::string cell = cell_of(i);
      out += cell;
      if (i + 1 < widths.size()) out += std::string(widths[i] - display_width(cell) + 2, ' ');
    }
    out += '\n';
  };
  append_row([&](std::size_t i) { return result.columns[i]; });
  append_row([&](std::size_t i) { return std::string(widths[i], '-'); });
  for (const auto& row : result.rows) append_row([&](std::size_t i) { return row[i].value_or("NULL"); });
  out += fmt::format("({} row{})\n", result.rows.size(), result.rows.size() == 1 ? "" : "s");
  return out;
}

std::string format_csv(const db::QueryResult& result) {
  std::string out;
  for (std::size_t i = 0; i < result.columns.size(); ++i)
    out += (i ? "," : "") + plotting::csv_field(result.columns[i]);
  out += "\r\n";
  for (const auto& row : result.rows) {
    for (std::size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + plotting::csv_field(row[i].value_or(""));
    out += "\r\n";
  }
  return out;
}

}  // namespace scalebench::cli
