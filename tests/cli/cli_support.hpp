// What the cli tests share: running `scalebench ARGS...` in-process and keeping what it printed.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "db/db_support.hpp"  // execute_sql
#include "test_support.hpp"

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

inline std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs the built scalebench binary with `args` (stdout and stderr together in `out`); it finds
// the trainer beside itself, as for a user. status is -1 when it did not exit normally.
inline CliResult run_binary(const std::vector<std::string>& args) {
  std::string command = shell_quoted((binary_dir() / "scalebench").string());
  for (const auto& arg : args) command += " " + shell_quoted(arg);
  command += " 2>&1";
  CliResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed", ""};
  char buffer[4096];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, got);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace scalebench::test
