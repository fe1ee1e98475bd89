// The `scalebench` command line: a table of subcommands, each a small pipeline over the modules.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace scalebench::cli {

struct Subcommand {
  std::string_view name;
  std::string_view summary;
};

// The table `scalebench help` prints, in order.
const std::vector<Subcommand>& subcommands();

// Runs `scalebench ARGS...` (args excludes the program name). Returns the exit status:
// 0 success, 1 a failure the message explains, 2 a usage error.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace scalebench::cli
