// `scalebench merge SIDE.db... --into DB`: the runs of side files (or any scalebench databases)
// into a results database (docs/database.md, "Busy databases and side files").
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace scalebench::cli {

struct MergeCommand {
  std::vector<std::string> sources;
  std::string into;
  bool skip_duplicates = false;
};
void declare_merge_options(CLI::App& app, MergeCommand& options);
int merge_command(const MergeCommand& options, std::ostream& out, std::ostream& err);

}  // namespace scalebench::cli
