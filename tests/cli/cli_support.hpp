// What the cli tests share: running `scalebench ARGS...` in-process and keeping what it printed.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.hpp"

namespace scalebench::test {

struct CliResult {
  int status = 0;
  std::string out;
  std::string err;
};

inline CliResult invoke(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int status = cli::run_cli(args, out, err);
  return {status, out.str(), err.str()};
}

}  // namespace scalebench::test
