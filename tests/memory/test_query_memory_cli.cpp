// `scalebench query --max-memory` bounds what the process holds, printing included (issue 23,
// item 7): the real binary on 100 000 rows of 1 000 characters under 64 MiB. --csv streams the
// whole result; the aligned table (it needs every row for its widths) stops with the limit's
// error. Either way the child's peak resident memory (wait4's ru_maxrss) stays under the limit
// plus what the program itself takes (measured on a tiny query).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "db/database.hpp"
#include "test_support.hpp"

extern char** environ;

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

struct Outcome {
  int status = -1;     // exit status; -1 when it did not exit normally
  long peak_kib = -1;  // the child's peak resident set (ru_maxrss, KiB)
};

// Runs scalebench with `args`, stdout to `out_path` and stderr to `err_path` (never into this
// process's memory), and waits for it with wait4 to get its own peak RSS.
Outcome run_measured(const std::vector<std::string>& args, const fs::path& out_path,
                     const fs::path& err_path) {
  const std::string binary = (test::binary_dir() / "scalebench").string();
  std::vector<std::string> all{binary};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : all) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  Outcome outcome;
  if (rc != 0) return outcome;
  int status = 0;
  rusage usage{};
  if (::wait4(pid, &status, 0, &usage) != pid) return outcome;
  outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  outcome.peak_kib = usage.ru_maxrss;
  return outcome;
}

// Lines and bytes of a file, read in blocks.
std::pair<std::size_t, std::size_t> count_lines_and_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> block(1 << 16);
  std::size_t lines = 0;
  std::size_t bytes = 0;
  while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0) {
    const auto got = static_cast<std::size_t>(in.gcount());
    bytes += got;
    for (std::size_t i = 0; i < got; ++i) lines += block[i] == '\n' ? 1 : 0;
  }
  return {lines, bytes};
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("query --max-memory bounds the peak RSS of printing: --csv streams, aligned stops") {
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's shadow memory and quarantine are resident too: no RSS bound holds there.
  SCALEBENCH_SKIP("peak RSS is not measured under AddressSanitizer");
#endif
  test::TempDir dir;
  const auto db_path = (dir / "results.db").string();
  { auto database = db::Database::open(db_path); }
  const auto out = dir / "out.txt";
  const auto err = dir / "err.txt";

  const Outcome tiny = run_measured({"query", "--db", db_path, "SELECT 1"}, out, err);
  REQUIRE(tiny.status == 0);
  REQUIRE(tiny.peak_kib > 0);
  const long limit_kib = 64 * 1024;
  // The program itself (the tiny query's peak) and 8 MiB for allocator slack.
  const long bound_kib = limit_kib + tiny.peak_kib + 8 * 1024;
  MESSAGE("tiny query peak ", tiny.peak_kib, " KiB; bound ", bound_kib, " KiB");

  const auto rows_of = [](int n) {
    return "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < " +
           std::to_string(n) + ") SELECT printf('%.*c', 1000, 'x') AS x FROM c";
  };

  SUBCASE("--csv: the whole result, streamed") {
    const Outcome csv = run_measured(
        {"query", "--db", db_path, "--max-memory", "64MiB", "--csv", rows_of(100000)}, out, err);
    MESSAGE("--csv peak ", csv.peak_kib, " KiB; stderr: ", read_text(err));
    CHECK(csv.status == 0);
    const auto [lines, bytes] = count_lines_and_bytes(out);
    CHECK(lines == 100001);                   // the header and every row
    CHECK(bytes == 3 + 100000 * (1000 + 2));  // "x\r\n", then 1 000 x's and "\r\n" each
    CHECK(csv.peak_kib < bound_kib);
  }
  SUBCASE("aligned: the limit's error, naming --max-memory") {
    const Outcome aligned = run_measured(
        {"query", "--db", db_path, "--max-memory", "64MiB", rows_of(100000)}, out, err);
    const std::string message = read_text(err);
    MESSAGE("aligned peak ", aligned.peak_kib, " KiB; stderr: ", message);
    CHECK(aligned.status == 1);
    CHECK(message.find("memory limit of 64 MiB") != std::string::npos);
    CHECK(message.find("raise it with --max-memory SIZE") != std::string::npos);
    CHECK(message.find("--csv streams") != std::string::npos);
    CHECK(fs::file_size(out) == 0);  // no partial table
    CHECK(aligned.peak_kib < bound_kib);
  }
  SUBCASE("aligned: a result that fits is printed whole, within the bound") {
    const Outcome aligned =
        run_measured({"query", "--db", db_path, "--max-memory", "64MiB", rows_of(50000)}, out, err);
    MESSAGE("aligned (50 000 rows) peak ", aligned.peak_kib, " KiB; stderr: ", read_text(err));
    CHECK(aligned.status == 0);
    const auto [lines, bytes] = count_lines_and_bytes(out);
    CHECK(lines == 50000 + 3);  // header, rule, rows, "(50000 rows)"
    CHECK(bytes > 50000u * 1000);
    CHECK(aligned.peak_kib < bound_kib);
  }
}
