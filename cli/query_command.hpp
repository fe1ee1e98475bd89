// `scalebench query SQL`: one read-only statement on the results database (db/read_only_query),
// printed as an aligned table or CSV (cli/query_format.hpp).
#pragma once

#include <iosfwd>
#include <string>

#include "cli/commands.hpp"
#include "db/database.hpp"

namespace scalebench::cli {

struct QueryCommand {
  std::string database = kDefaultDatabase;
  std::string sql;
  bool csv = false;
  db::QueryLimits limits;  // a limit error names the option that raises it
};
void declare_query_options(CLI::App& app, QueryCommand& options);
int query_command(const QueryCommand& options, std::ostream& out, std::ostream& err);

}  // namespace scalebench::cli
