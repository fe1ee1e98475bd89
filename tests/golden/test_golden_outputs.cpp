// Golden outputs: every command of tests/data/golden/commands.txt (report in all five formats,
// stats --json, compare, model, plot's data files) run by the built scalebench on fresh copies of
// the committed fixtures, and its output compared byte for byte with the expected files beside
// it. A refactor of the report layer must leave them all as they are; an intended output change
// regenerates them with scripts/update-golden.sh and says so in its commit message.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_support.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

struct GoldenCommand {
  std::string name;
  bool needs_gnuplot = false;
  std::vector<std::string> args;
};

// "@fixture NEW FROM SQL": a copy of FROM changed by one statement.
struct DerivedFixture {
  std::string name, from, sql;
};

struct Manifest {
  std::vector<GoldenCommand> commands;
  std::vector<DerivedFixture> fixtures;
};

fs::path golden_dir() { return test::data_dir() / "golden"; }

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// commands.txt, read as scripts/update-golden.sh reads it.
const Manifest& manifest() {
  static const Manifest parsed = [] {
    Manifest m;
    std::ifstream in(golden_dir() / "commands.txt");
    REQUIRE_MESSAGE(in, "cannot read " << (golden_dir() / "commands.txt").string());
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line.starts_with('#')) continue;
      std::istringstream fields(line);
      std::string first, second, third;
      fields >> first >> second >> third;
      std::string rest;
      std::getline(fields, rest);
      if (first == "@fixture") {
        m.fixtures.push_back({second, third, rest});
        continue;
      }
      REQUIRE_MESSAGE((second == "-" || second == "gnuplot"), "commands.txt: " << line);
      auto args = split_words(rest);
      args.insert(args.begin(), third);
      m.commands.push_back({first, second == "gnuplot", args});
    }
    return m;
  }();
  return parsed;
}

bool have_gnuplot() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

// The one normalisation (commands.txt): gnuplot's SVG inside an HTML page, whose bytes depend on
// gnuplot's version, becomes a fixed element (perl's s{<svg\b.*?</svg>}{...}gs in the script).
std::string without_gnuplot_svg(std::string text) {
  static const std::string placeholder =
      "<svg><!-- gnuplot's SVG, left out of the golden output --></svg>";
  std::size_t from = 0;
  for (;;) {
    std::size_t start = text.find("<svg", from);
    while (start != std::string::npos && start + 4 < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[start + 4])) || text[start + 4] == '_'))
      start = text.find("<svg", start + 4);
    if (start == std::string::npos) return text;
    const std::size_t end = text.find("</svg>", start);
    if (end == std::string::npos) return text;
    text.replace(start, end + 6 - start, placeholder);
    from = start + placeholder.size();
  }
}

// Where two texts first differ, by line, and (where diff(1) exists) the unified diff; the actual
// text is kept in the build directory for a closer look.
std::string describe_difference(const std::string& file, const std::string& expected,
                                const std::string& actual) {
  const fs::path kept_dir = test::binary_dir() / "golden-actual";
  fs::create_directories(kept_dir);
  const fs::path kept = kept_dir / file;
  std::ofstream(kept, std::ios::binary) << actual;
  std::istringstream e(expected), a(actual);
  std::string e_line, a_line;
  std::size_t line = 1;
  for (;; ++line) {
    const bool e_ok = static_cast<bool>(std::getline(e, e_line));
    const bool a_ok = static_cast<bool>(std::getline(a, a_line));
    if (!e_ok || !a_ok || e_line != a_line) {
      e_line = e_ok ? e_line : "<end of file>";
      a_line = a_ok ? a_line : "<end of file>";
      break;
    }
  }
  std::string message = "tests/data/golden/" + file + " differs from the output at line " +
                        std::to_string(line) + ":\n  expected: " + e_line +
                        "\n  actual:   " + a_line + "\n";
  if (e_line == a_line) message += "  (the same lines: they differ in the final newline)\n";
  const std::string diff = "diff -u " + test::shell_quoted((golden_dir() / file).string()) + " " +
                           test::shell_quoted(kept.string()) + " 2>/dev/null | head -n 80";
  if (FILE* pipe = ::popen(diff.c_str(), "r")) {
    char buffer[4096];
    std::size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) message.append(buffer, got);
    ::pclose(pipe);
  }
  message += "(actual output kept in " + kept.string() +
             "; an intended change: scripts/update-golden.sh, and say so in the commit)";
  return message;
}

void check_file(const std::string& file, const std::string& actual) {
  const std::string expected = read_bytes(golden_dir() / file);
  if (actual == expected) return;
  FAIL_CHECK(describe_difference(file, expected, actual));
}

// Runs one command as scripts/update-golden.sh does (its own directory of fixture copies as the
// working directory, relative paths) and compares stdout, stderr and the data files it wrote.
void check_command(const GoldenCommand& command) {
  INFO("scalebench command ", command.name);
  test::TempDir dir;
  const fs::path run = dir / "run";
  fs::create_directory(run);
  for (const auto& [source, ext] : {std::pair{"db", ".db"}, std::pair{"cli", ".csv"}})
    for (const auto& entry : fs::directory_iterator(test::data_dir() / source))
      if (entry.path().extension() == ext)
        fs::copy_file(entry.path(), run / entry.path().filename());
  for (const auto& fixture : manifest().fixtures) {
    fs::copy_file(run / fixture.from, run / fixture.name);
    test::execute_sql(run / fixture.name, fixture.sql);
  }
  std::string shell = "cd " + test::shell_quoted(run.string()) + " && " +
                      test::shell_quoted((test::binary_dir() / "scalebench").string());
  std::string shown = "scalebench";
  for (const auto& arg : command.args) shell += " " + test::shell_quoted(arg), shown += " " + arg;
  shell += " >" + test::shell_quoted((dir / "stdout").string()) + " 2>" +
           test::shell_quoted((dir / "stderr").string());
  INFO(shown);
  const int status = std::system(shell.c_str());
  const std::string err = read_bytes(dir / "stderr");
  INFO("stderr: ", err);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  check_file(command.name + ".out", without_gnuplot_svg(read_bytes(dir / "stdout")));
  if (fs::exists(golden_dir() / (command.name + ".err")))
    check_file(command.name + ".err", err);
  else
    CHECK_MESSAGE(err.empty(), "stderr was expected empty (no " << command.name << ".err)");
  for (const std::string ext : {".dat", ".gp"}) {
    const std::string file = command.name + ext;
    const bool expected = fs::exists(golden_dir() / file);
    CHECK_MESSAGE(fs::exists(run / file) == expected,
                  file << (expected ? " was not written" : " was written but has no golden file"));
    if (expected && fs::exists(run / file)) check_file(file, read_bytes(run / file));
  }
}

// The commands of one subcommand: those that draw with gnuplot, or those that do not.
std::vector<GoldenCommand> family(const std::string& subcommand, bool needs_gnuplot) {
  std::vector<GoldenCommand> chosen;
  for (const auto& command : manifest().commands)
    if (command.args.front() == subcommand && command.needs_gnuplot == needs_gnuplot)
      chosen.push_back(command);
  return chosen;
}

// Runs and checks the commands of one family; skipped where they need gnuplot and it is absent
// (the other families' cases run on, so a skip hides no failure).
void check_family(const std::string& subcommand, bool needs_gnuplot) {
  const auto commands = family(subcommand, needs_gnuplot);
  REQUIRE_FALSE(commands.empty());
  if (needs_gnuplot && !have_gnuplot())
    SCALEBENCH_SKIP(
        "gnuplot not found (apt-get install gnuplot-nox): these commands draw a "
        "figure, and fail without it");
  for (const auto& command : commands) check_command(command);
}

}  // namespace

TEST_CASE("golden outputs: report as markdown, csv, json and latex") {
  check_family("report", false);
}

TEST_CASE("golden outputs: report --format html, its figure normalised") {
  check_family("report", true);
}

TEST_CASE("golden outputs: stats, its JSON and the text") { check_family("stats", false); }

TEST_CASE("golden outputs: compare of two databases") { check_family("compare", false); }

TEST_CASE("golden outputs: model on the hold-out database and from presets") {
  check_family("model", false);
}

TEST_CASE("golden outputs: model --plot, its data file and script") { check_family("model", true); }

TEST_CASE("golden outputs: plot, its data files and scripts") { check_family("plot", true); }

TEST_CASE("golden outputs: each expected file belongs to a command and each command is tested") {
  std::vector<std::string> names;
  for (const auto& command : manifest().commands) {
    CHECK_MESSAGE(fs::exists(golden_dir() / (command.name + ".out")), command.name);
    const auto& first = command.args.front();
    CHECK_MESSAGE((first == "report" || first == "stats" || first == "compare" ||
                   first == "model" || first == "plot"),
                  command.name << ": no test case runs " << first);
    names.push_back(command.name);
  }
  for (const auto& entry : fs::directory_iterator(golden_dir())) {
    const auto file = entry.path().filename();
    if (file == "commands.txt") continue;
    CHECK_MESSAGE(std::find(names.begin(), names.end(), file.stem().string()) != names.end(),
                  file.string() << " has no command in commands.txt (stale? run "
                                   "scripts/update-golden.sh)");
  }
}
