// util::FileLock: one holder at a time, the holder named to the others, the file gone with a
// holder that gives it back, and a lock a killed holder leaves behind taken at once.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "test_support.hpp"
#include "util/error.hpp"
#include "util/file_lock.hpp"

using namespace scalebench;

TEST_CASE("a file lock has one holder at a time, named to the others") {
  test::TempDir dir;
  const auto path = dir / "x.lock";
  std::string held_by = "unchanged";
  auto first = util::FileLock::try_acquire(path, "pid 1 on host a since t", &held_by);
  REQUIRE(first);
  CHECK(held_by == "unchanged");
  // Another open file description, as another process would have: refused, holder named.
  CHECK(!util::FileLock::try_acquire(path, "second", &held_by));
  CHECK(held_by == "pid 1 on host a since t");
  // Given back: the file is removed, and the next one takes the lock.
  first.reset();
  CHECK(!std::filesystem::exists(path));
  auto second = util::FileLock::try_acquire(path, "second", nullptr);
  REQUIRE(second);
  std::ifstream file(path);
  std::string text;
  std::getline(file, text);
  CHECK(text == "second");
}

TEST_CASE("a file lock whose holder was killed with -9 is taken, its stale text replaced") {
  test::TempDir dir;
  const auto path = dir / "x.lock";
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t holder = ::fork();
  REQUIRE(holder >= 0);
  if (holder == 0) {
    auto lock = util::FileLock::try_acquire(path, "the child, long gone", nullptr);
    (void)!::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);
  ::close(ready[0]);
  std::string held_by;
  CHECK(!util::FileLock::try_acquire(path, "parent", &held_by));
  CHECK(held_by == "the child, long gone");
  ::kill(holder, SIGKILL);
  int status = 0;
  ::waitpid(holder, &status, 0);
  CHECK(std::filesystem::exists(path));  // left behind, but unlocked
  auto lock = util::FileLock::try_acquire(path, "parent", &held_by);
  REQUIRE(lock);
  std::ifstream file(path);
  std::string text;
  std::getline(file, text);
  CHECK(text == "parent");
}

TEST_CASE("a file lock that cannot be created is an error naming the file") {
  CHECK_THROWS_WITH_AS(util::FileLock::try_acquire("/nonexistent-dir-xyz/x.lock", "me", nullptr),
                       doctest::Contains("/nonexistent-dir-xyz/x.lock"), Error);
}

TEST_CASE("a lock file with a second name (a planted hard link) is refused, its target untouched") {
  test::TempDir dir;
  const auto victim = dir / "results-notes.txt";
  std::ofstream(victim) << "precious\n";
  const auto path = dir / "r.db.run-0123.lock";
  std::filesystem::create_hard_link(victim, path);
  CHECK_THROWS_WITH_AS(util::FileLock::try_acquire(path, "me", nullptr),
                       doctest::Contains("has 2 links"), Error);
  std::ifstream file(victim);
  std::string text;
  std::getline(file, text);
  CHECK(text == "precious");
  // A symbolic link is not followed, and says what it is.
  std::filesystem::remove(path);
  std::filesystem::create_symlink(victim, path);
  CHECK_THROWS_WITH_AS(util::FileLock::try_acquire(path, "me", nullptr),
                       doctest::Contains("is a symbolic link (planted there?)"), Error);
  // A directory at the name is no lock file either.
  std::filesystem::remove(path);
  std::filesystem::create_directory(path);
  CHECK_THROWS_AS(util::FileLock::try_acquire(path, "me", nullptr), Error);
}
