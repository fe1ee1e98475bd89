// Reading a CSV file of observations (RFC 4180: quoted fields, doubled quotes, CRLF or LF).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/error.hpp"

namespace scalebench::report {

struct CsvTable {
  std::filesystem::path source;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // every row has header.size() fields
  std::vector<std::size_t> row_lines;          // the file line each row starts on

  // The values of one column; an unknown name lists the columns (with a "did you mean").
  std::vector<std::string> column(std::string_view name) const;
  // The values of one column as numbers; a non-number names its line.
  std::vector<double> numeric_column(std::string_view name) const;
  // The same with missing values: an empty cell, NA, nan or NaN is absent.
  std::vector<std::optional<double>> optional_numeric_column(std::string_view name) const;
};

CsvTable parse_csv(std::string_view text, const std::filesystem::path& source);
CsvTable read_csv(const std::filesystem::path& path);

}  // namespace scalebench::report
