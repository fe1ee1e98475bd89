#include "cli/query_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <sstream>

#include "report/export/plain_table.hpp"
#include "util/text.hpp"

namespace scalebench::cli {

std::string format_aligned(const db::QueryResult& result) {
  report::AlignedTable table(result.columns);
  for (const auto& row : result.rows) table.add(row);
  std::ostringstream out;
  table.write(out);
  return out.str();
}

std::string format_csv(const db::QueryResult& result, bool escape) {
  std::string out;
  report::append_csv_record(out, result.columns, escape);
  for (const auto& row : result.rows) report::append_csv_record(out, row, escape);
  return out;
}

}  // namespace scalebench::cli
