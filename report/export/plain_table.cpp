#include "report/export/plain_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "report/export/format.hpp"
#include "report/export/markup.hpp"
#include "util/text.hpp"

namespace scalebench::report {
namespace {

// Display width in code points, close enough for aligning UTF-8 text in a terminal.
std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// Heap bytes a std::string of this capacity takes (libstdc++ keeps up to 15 characters inline;
// malloc adds 8 bytes of header and rounds to 16).
std::size_t string_heap_bytes(std::size_t capacity) {
  return capacity <= 15 ? 0 : (capacity + 1 + 8 + 15) / 16 * 16;
}

}  // namespace

AlignedTable::AlignedTable(const std::vector<std::string>& columns) {
  for (const auto& column : columns) {
    header_.push_back(util::escape_controls(column));
    widths_.push_back(display_width(header_.back()));
  }
}

void AlignedTable::add(const std::vector<std::optional<std::string>>& row) {
  for (std::size_t i = 0; i < widths_.size(); ++i) {
    std::string cell =
        i < row.size() && row[i] ? util::escape_controls(*row[i]) : std::string("NULL");
    if (cell.capacity() > cell.size() + 64) cell.shrink_to_fit();
    widths_[i] = std::max(widths_[i], display_width(cell));
    // The string itself in its deque block, the block's share of the deque's map, its heap.
    held_ += sizeof(std::string) + sizeof(void*) + string_heap_bytes(cell.capacity());
    cells_.push_back(std::move(cell));
  }
  ++rows_;
}

void AlignedTable::add(const std::vector<std::string>& row) {
  add(std::vector<std::optional<std::string>>(row.begin(), row.end()));
}

void AlignedTable::write(std::ostream& out, Layout layout) const {
  std::string line;
  const auto write_row = [&](auto cell_at) {
    line.clear();
    for (std::size_t i = 0; i < widths_.size(); ++i) {
      const std::string& cell = cell_at(i);
      line += cell;
      if (i + 1 < widths_.size()) line.append(widths_[i] - display_width(cell) + 2, ' ');
    }
    line += '\n';
    out << line;
  };
  write_row([&](std::size_t i) -> const std::string& { return header_[i]; });
  std::vector<std::string> rule;
  for (const auto width : widths_) rule.emplace_back(width, '-');
  if (layout == Layout::Query)
    write_row([&](std::size_t i) -> const std::string& { return rule[i]; });
  for (std::size_t r = 0; r < rows_; ++r) {
    write_row([&](std::size_t i) -> const std::string& { return cells_[r * widths_.size() + i]; });
  }
  if (layout == Layout::Query) out << fmt::format("({} row{})\n", rows_, rows_ == 1 ? "" : "s");
}

void append_csv_record(std::string& out, const std::vector<std::string>& fields, bool escape) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    out += csv_field(escape ? util::escape_controls(fields[i]) : fields[i]);
  }
  out += "\r\n";
}

void append_csv_record(std::string& out, const std::vector<std::optional<std::string>>& fields,
                       bool escape) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    const std::string_view text = fields[i] ? std::string_view(*fields[i]) : std::string_view();
    out += escape ? csv_field(util::escape_controls(text)) : csv_field(text);
  }
  out += "\r\n";
}

std::string markdown_table(const std::vector<std::string>& columns, std::string_view alignment,
                           const std::vector<std::vector<std::string>>& rows) {
  const auto line = [](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (const auto& cell : cells) out += " " + markdown_cell(cell) + " |";
    return out + "\n";
  };
  std::string out = line(columns) + "|";
  for (std::size_t i = 0; i < columns.size(); ++i)
    out += i < alignment.size() && alignment[i] == 'r' ? "---:|" : "---|";
  out += "\n";
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string html_table(const std::vector<std::string>& columns,
                       const std::vector<std::vector<std::string>>& rows) {
  std::string out = "<table>\n<thead><tr>";
  for (const auto& x : columns) out += "<th>" + html(x) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (const auto& x : row) out += "<td>" + html(x) + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string latex_tabular(const std::vector<std::string>& columns, std::string_view alignment,
                          const std::vector<std::vector<std::string>>& rows) {
  std::string spec;
  for (std::size_t i = 0; i < columns.size(); ++i)
    spec += i < alignment.size() && alignment[i] == 'r' ? 'r' : 'l';
  std::string out = fmt::format("\\begin{{tabular}}{{{}}}\n\\toprule\n", spec);
  const auto line = [](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i) text += (i ? " & " : "") + tex(cells[i]);
    return text + " \\\\\n";
  };
  out += line(columns) + "\\midrule\n";
  for (const auto& row : rows) out += line(row);
  return out + "\\bottomrule\n\\end{tabular}\n";
}

}  // namespace scalebench::report
