// Tests for report/export/output_file.cpp: file names from database names, and the one rule for
// every output: absent or a regular file that is no database; links, devices, FIFOs refused.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "report/analysis/report.hpp"
#include "report/export/output_file.hpp"
#include "test_support.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::size_t entries_in(const fs::path& directory) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(directory), fs::directory_iterator()));
}

}  // namespace

TEST_CASE("safe_file_name: one harmless path component, never empty, never hidden") {
  CHECK(report::safe_file_name("mnist-cnn_v1.2") == "mnist-cnn_v1.2");
  CHECK(report::safe_file_name("../../x/evil") == "_._.._x_evil");
  CHECK(report::safe_file_name("/etc/passwd") == "_etc_passwd");
  CHECK(report::safe_file_name("..") == "_.");
  CHECK(report::safe_file_name(".") == "_");
  CHECK(report::safe_file_name(".hidden") == "_hidden");
  CHECK(report::safe_file_name("") == "unnamed");
  CHECK(report::safe_file_name("a b\nc\\d'e\"f`g$h") == "a_b_c_d_e_f_g_h");
  CHECK(report::safe_file_name(std::string("a\0b", 3)) == "a_b");
  CHECK(report::safe_file_name("é") == "__");  // two UTF-8 bytes
  CHECK(report::safe_file_name(std::string(300, 'x')).size() == report::kMaxFileNameStem);
}

TEST_CASE("write_file_replacing refuses a symlink at the target, leaving it and its target") {
  test::TempDir dir;
  const fs::path victim = dir / "victim.txt";
  std::ofstream(victim) << "precious";
  const fs::path target = dir / "report.md";
  fs::create_symlink(victim, target);

  CHECK_THROWS_WITH_AS(report::write_file_replacing(target, "| table |\n"),
                       doctest::Contains(("report.md: refusing to write there: it is a symbolic "
                                          "link to " +
                                          victim.string())
                                             .c_str()),
                       report::ReportError);
  CHECK(read_file(victim) == "precious");
  CHECK(fs::is_symlink(fs::symlink_status(target)));
  CHECK(entries_in(dir.path()) == 2);  // no temporary file left behind

  // A dangling symlink (to a file an attacker wants created) is refused the same way.
  const fs::path created_elsewhere = dir / "would-be-created";
  fs::remove(target);
  fs::create_symlink(created_elsewhere, target);
  CHECK_THROWS_AS(report::write_file_replacing(target, "again"), report::ReportError);
  CHECK_FALSE(fs::exists(created_elsewhere));
  CHECK(fs::is_symlink(fs::symlink_status(target)));

  // Absent, then an existing regular file: written, then replaced whole.
  fs::remove(target);
  report::write_file_replacing(target, "first");
  CHECK(read_file(target) == "first");
  report::write_file_replacing(target, "x");
  CHECK(read_file(target) == "x");
}

TEST_CASE("check_output_target: only absent paths and regular files that are no database") {
  test::TempDir dir;
  fs::create_directory(dir / "sub");
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  const auto refused = [](const fs::path& path, const std::string& words) {
    CAPTURE(path);
    CHECK_THROWS_WITH_AS(
        report::check_output_target(path),
        doctest::Contains((path.string() + ": refusing to write there: it is " + words).c_str()),
        report::ReportError);
  };
  refused(dir / "sub", "a directory");
  refused(dir / "fifo", "a FIFO");
  refused("/dev/null", "a character device");
  refused("/dev/stdout", "a symbolic link");  // the system's own link, never replaced
  // Any SQLite database, not only the command's own (model --plot h over h.dat), and the side
  // files of one.
  std::ofstream(dir / "other.dat") << std::string("SQLite format 3\0", 16) << "pages";
  refused(dir / "other.dat", "a SQLite database");
  std::ofstream(dir / "other.dat-wal") << "wal";
  refused(dir / "other.dat-wal", "the -wal file of the SQLite database");
  // A file that merely mentions SQLite, a short file and an absent path are fine.
  std::ofstream(dir / "notes.md") << "SQLite format 2 is old";
  std::ofstream(dir / "short.md") << "SQL";
  for (const char* fine : {"notes.md", "short.md", "absent.md"}) {
    CAPTURE(fine);
    CHECK_NOTHROW(report::check_output_target(dir / fine));
  }
  // A device node made here (root only): refused, and still a device afterwards.
  if (::geteuid() == 0 && ::mknod((dir / "full").c_str(), S_IFCHR | 0600, makedev(1, 7)) == 0) {
    CHECK_THROWS_AS(report::write_file_replacing(dir / "full", "x"), report::ReportError);
    CHECK(fs::is_character_file(fs::symlink_status(dir / "full")));
  }
}

TEST_CASE("write_file_replacing names the target when it cannot write") {
  test::TempDir dir;
  fs::create_directory(dir / "sub");
  CHECK_THROWS_WITH_AS(report::write_file_replacing(dir / "sub", "x"),
                       doctest::Contains("sub: refusing to write there: it is a directory"),
                       report::ReportError);
  CHECK_THROWS_WITH_AS(report::write_file_replacing(dir / "missing" / "r.md", "x"),
                       doctest::Contains("r.md: cannot create a file in"), report::ReportError);
}

TEST_CASE("refuse_database_output: the database by any name, and its -wal and -shm files") {
  test::TempDir dir;
  const fs::path database = dir / "r.db";
  std::ofstream(database) << "SQLite format 3";
  std::ofstream(dir / "r.db-wal") << "";
  fs::create_directory(dir / "sub");
  fs::create_symlink(database, dir / "link.db");
  fs::create_hard_link(database, dir / "hard.db");

  for (const fs::path& output :
       {database, dir / "sub" / ".." / "r.db", dir / "link.db", dir / "hard.db", dir / "r.db-wal",
        dir / "r.db-shm", dir / "r.db-journal"}) {
    CAPTURE(output);
    CHECK_THROWS_WITH_AS(report::refuse_database_output(output, database),
                         doctest::Contains("it is the results database"), report::ReportError);
  }
  // Relative spellings resolve against the working directory.
  const fs::path old_cwd = fs::current_path();
  fs::current_path(dir.path());
  CHECK_THROWS_AS(report::refuse_database_output("r.db", database), report::ReportError);
  CHECK_THROWS_AS(report::refuse_database_output("./sub/../r.db", "r.db"), report::ReportError);
  CHECK_NOTHROW(report::refuse_database_output("r.md", "r.db"));
  fs::current_path(old_cwd);
  CHECK_NOTHROW(report::refuse_database_output(dir / "report.md", database));
  CHECK_NOTHROW(report::refuse_database_output(dir / "r.db.md", database));
}

TEST_CASE("PrivateTempDir is private and goes away with its contents") {
  test::TempDir dir;
  fs::path path;
  {
    report::PrivateTempDir work(dir.path());
    path = work.path();
    CHECK(path.parent_path() == dir.path());
    CHECK((fs::status(path).permissions() & fs::perms::all) == fs::perms::owner_all);
    std::ofstream(path / "file") << "x";
  }
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("PrivateTempDir removes the directories a killed process left, not a live one's") {
  // merge copies a side file into one; a kill -9 leaves it behind. The next one made in the same
  // directory removes it: its pid is in its name and no longer runs.
  test::TempDir dir;
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  // Not reaped yet: a zombie, as a process killed -9 stays until its parent (or a slow init)
  // collects it; it runs no more, so its directory goes.
  for (int i = 0; i < 500; ++i) {
    siginfo_t info{};
    if (::waitid(P_PID, child, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == child)
      break;  // exited, still unreaped
    ::usleep(2000);
  }
  const fs::path orphan = dir / fmt::format(".scalebench-{}-AbC123", child);
  const fs::path live = dir / fmt::format(".scalebench-{}-XyZ789", ::getppid());
  const fs::path foreign = dir / ".scalebench-notapid-q";
  for (const auto& path : {orphan, live, foreign}) {
    fs::create_directory(path);
    std::ofstream(path / "side.db") << "copy";
  }
  { report::PrivateTempDir work(dir.path()); }
  ::waitpid(child, nullptr, 0);
  CHECK_FALSE(fs::exists(orphan));
  CHECK(fs::exists(live / "side.db"));
  CHECK(fs::exists(foreign / "side.db"));
}
