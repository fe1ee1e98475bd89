// What the end-to-end measurement tests share: a test script's own epoch clock, from the
// `CLOCK epoch=N seconds=S` lines it printed on stderr (stored with the run).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <vector>

#include "db/database.hpp"

namespace scalebench::test {

// Epoch -> seconds, from rank 0's lines (or untagged ones).
inline std::map<int, double> script_clock(const db::Database& database, std::int64_t run_id) {
  std::map<int, double> clock;
  for (const auto& line : database.lines(run_id)) {
    if (line.rank.value_or(0) != 0) continue;
    int epoch = 0;
    double seconds = 0;
    if (std::sscanf(line.text.c_str(), "CLOCK epoch=%d seconds=%lf", &epoch, &seconds) == 2)
      clock[epoch] = seconds;
  }
  return clock;
}

// The run's epoch times from every rank's `WALL epoch=N begin=T end=T` lines (the rule of
// docs/metrics.md): epoch N from the first rank's begin to the first begin of N + 1; the last
// epoch to the last rank's end.
inline std::map<int, double> ranks_clock(const db::Database& database, std::int64_t run_id) {
  std::map<int, double> first_begin, last_end;
  for (const auto& line : database.lines(run_id)) {
    int epoch = 0;
    double begin = 0, end = 0;
    if (std::sscanf(line.text.c_str(), "WALL epoch=%d begin=%lf end=%lf", &epoch, &begin, &end) !=
        3)
      continue;
    first_begin[epoch] = first_begin.contains(epoch) ? std::min(first_begin[epoch], begin) : begin;
    last_end[epoch] = last_end.contains(epoch) ? std::max(last_end[epoch], end) : end;
  }
  std::map<int, double> clock;
  for (const auto& [epoch, begin] : first_begin) {
    const auto next = first_begin.find(epoch + 1);
    clock[epoch] = (next != first_begin.end() ? next->second : last_end[epoch]) - begin;
  }
  return clock;
}

// The run's epochs, each checked against the ranks' own clock (ranks_clock): `count` of them, every
// one within 5 % or 20 ms of the script's own time for it (the acceptance of the measuring tests).
inline std::vector<db::EpochRecord> epochs_on_clock(const db::Database& database,
                                                    std::int64_t run_id, std::size_t count) {
  auto epochs = database.epochs(run_id);
  const auto clock = ranks_clock(database, run_id);
  REQUIRE(epochs.size() == count);
  REQUIRE(clock.size() == count);
  for (const auto& epoch : epochs) {
    INFO("epoch " << epoch.epoch << " by " << epoch.end_rule.value_or("-"));
    REQUIRE(epoch.duration_seconds);
    REQUIRE(clock.contains(epoch.epoch));
    const double own = clock.at(epoch.epoch);
    CHECK(std::abs(*epoch.duration_seconds - own) <= std::max(0.020, 0.05 * own));
  }
  return epochs;
}

}  // namespace scalebench::test
