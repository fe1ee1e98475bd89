#include "report/data/csv_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "util/text.hpp"

namespace scalebench::report {
namespace {

using util::trim;

}  // namespace

CsvTable parse_csv(std::string_view text, const std::filesystem::path& source) {
  CsvTable table;
  table.source = source;
  std::vector<std::vector<std::string>> records;
  std::vector<std::size_t> record_lines;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, field_was_quoted = false;
  std::size_t line = 1, record_line = 1;
  const auto end_field = [&] {
    record.push_back(field_was_quoted ? field : std::string(trim(field)));
    field.clear();
    field_was_quoted = false;
  };
  const auto end_record = [&] {
    end_field();
    const bool blank = record.size() == 1 && record[0].empty();
    if (!blank) {
      records.push_back(std::move(record));
      record_lines.push_back(record_line);
    }
    record.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        field += '"', ++i;
      else if (c == '"')
        quoted = false;
      else {
        if (c == '\n') ++line;
        field += c;
      }
    } else if (c == '"' && trim(field).empty()) {
      quoted = field_was_quoted = true;
      field.clear();
    } else if (c == ',') {
      end_field();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      end_record();
      record_line = ++line;
    } else {
      field += c;
    }
  }
  if (quoted)
    throw InputError(fmt::format("{}:{}: unterminated quoted field", source.string(), record_line));
  if (!field.empty() || !record.empty()) end_record();
  if (records.empty())
    throw InputError(fmt::format("{}: empty CSV file (expected a header line)", source.string()));

  table.header = std::move(records[0]);
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != table.header.size())
      throw InputError(fmt::format("{}:{}: {} fields, but the header has {}", source.string(),
                                   record_lines[r], records[r].size(), table.header.size()));
    table.rows.push_back(std::move(records[r]));
    table.row_lines.push_back(record_lines[r]);
  }
  return table;
}

CsvTable read_csv(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(fmt::format("{}: cannot open the CSV file", path.string()));
  std::stringstream text;
  text << file.rdbuf();
  return parse_csv(text.str(), path);
}

std::vector<std::string> CsvTable::column(std::string_view name) const {
  const auto found = std::find(header.begin(), header.end(), name);
  if (found == header.end()) {
    const auto suggestion = util::closest_match(name, header);
    throw InputError(
        fmt::format("{}: no column \"{}\"{}; columns: {}", source.string(), name,
                    suggestion ? fmt::format(" (did you mean \"{}\"?)", *suggestion) : "",
                    fmt::join(header, ", ")));
  }
  const auto index = static_cast<std::size_t>(found - header.begin());
  std::vector<std::string> values;
  values.reserve(rows.size());
  for (const auto& row : rows) values.push_back(row[index]);
  return values;
}

std::vector<std::optional<double>> CsvTable::optional_numeric_column(std::string_view name) const {
  const auto text = column(name);
  std::vector<std::optional<double>> values;
  values.reserve(text.size());
  for (std::size_t r = 0; r < text.size(); ++r) {
    const auto& cell = text[r];
    if (cell.empty() || cell == "NA" || cell == "nan" || cell == "NaN") {
      values.emplace_back();
      continue;
    }
    double value = 0;
    const auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
    if (error != std::errc{} || end != cell.data() + cell.size() || !std::isfinite(value))
      throw InputError(
          fmt::format("{}:{}: column \"{}\": expected a finite number or NA, got \"{}\"",
                      source.string(), row_lines[r], name, cell));
    values.emplace_back(value);
  }
  return values;
}

std::vector<double> CsvTable::numeric_column(std::string_view name) const {
  const auto text = column(name);
  std::vector<double> values;
  values.reserve(text.size());
  for (std::size_t r = 0; r < text.size(); ++r) {
    double value = 0;
    const auto& cell = text[r];
    const auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
    if (cell.empty() || error != std::errc{} || end != cell.data() + cell.size() ||
        !std::isfinite(value))
      throw InputError(fmt::format("{}:{}: column \"{}\": expected a finite number, got \"{}\"",
                                   source.string(), row_lines[r], name, cell));
    values.push_back(value);
  }
  return values;
}

}  // namespace scalebench::report
