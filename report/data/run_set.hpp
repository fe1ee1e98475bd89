// The runs an analysis is built from, as report/data hands them up (ARCHITECTURE.md, "A RunSet's
// way"): each ok run with its epochs after the warm-up, its levels, images and trainer header,
// and the set's order, labels, provenance and notes. No database type: report/analysis,
// report/export, plotting/ and scaling/ see these only (scripts/check-includes.sh). Loading a
// RunSet from the results database is report/data/load_runs.hpp's; everything here is pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/data/labels.hpp"

namespace scalebench::report {

// The unit of analysis, what one observation of a RunSet is: "run" (each run's mean epoch time,
// the default everywhere), "nested" (epochs within runs within groups: a mixed model,
// stats/nested_anova.hpp) or "epoch" (every epoch on its own, as the reference papers did:
// pseudo-replication, for reproducing them).
inline constexpr std::string_view kDefaultUnit = "run";
std::vector<std::string> unit_names();
// Throws ReportError naming the units when `unit` is none of them.
void check_unit(std::string_view unit);

// The levels of the experiment file's factors, in the file's order: {{"model", "vgg16"}, ...}.
using FactorLevels = std::vector<std::pair<std::string, std::string>>;
// Key/value pairs of where and with what the runs were measured (docs/database.md).
using Provenance = std::vector<std::pair<std::string, std::string>>;

// "<condition>" for launcher "single", else "<condition> np=<np>"; the levels of the experiment
// file's factors go between them: "hvd model=vgg16 np=2".
std::string group_label(std::string_view condition, std::string_view launcher, int np,
                        const FactorLevels& levels = {});

// Where a group goes in a table: the file's conditions (`condition_order`), then its levels
// (`level_order`), a plain process before a launched one, then np; names the file does not know
// go after the known ones. Sorting by it gives the report's rows and stats' groups one order.
std::vector<std::size_t> group_order_key(
    const std::vector<std::string>& condition_order,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& level_order,
    std::string_view condition, const FactorLevels& levels, std::string_view launcher, int np);

struct Epoch {
  Epoch() = default;
  Epoch(int number, double seconds) : number(number), seconds(seconds) {}

  int number = 0;  // 1-based, as the program counted
  double seconds = 0;
  std::optional<double> trainer_seconds = std::nullopt;  // the program's own clock, if printed
  std::optional<std::string> end_rule = std::nullopt;    // how its end was found (docs/metrics.md)
};

// scalebench-train's first line, `scalebench-train model=... parameters=... batch_size=...`
// (docs/trainer-output.md), as key/value pairs.
struct TrainerHeader {
  std::vector<std::pair<std::string, std::string>> fields;

  static TrainerHeader parse(std::string_view line);
  std::optional<std::string> value(std::string_view key) const;
  // The value as a finite number, if it is one.
  std::optional<double> number(std::string_view key) const;
};

// One ok run of the set.
struct Run {
  std::int64_t id = 0;
  std::int64_t instance = 0;  // the experiment instance (a `scalebench run`)
  std::string experiment;
  std::string condition;
  std::string launcher;
  int np = 1;
  int repetition = 1;
  FactorLevels levels = {};
  std::vector<Epoch> epochs = {};                        // after the warm-up, in order
  std::optional<long long> train_images = std::nullopt;  // per epoch, all ranks
  std::optional<double> test_accuracy = std::nullopt;    // the last epoch's
  std::optional<TrainerHeader> header = std::nullopt;    // only when loaded with headers

  // The mean of its epochs' durations (0 without epochs): a run's epoch time (docs/metrics.md).
  double mean_epoch_seconds() const;
  // train_images x epochs / the epochs' summed durations; absent without images or time.
  std::optional<double> images_per_second() const;
  // Its level of `factor`: one of the file's factors, or the built-ins condition, launcher, np
  // and group (group_label); absent when it has none.
  std::optional<std::string> level(std::string_view factor) const;
  std::string group() const { return group_label(condition, launcher, np, levels); }
};

// An ok allreduce benchmark run (bench/ and trainer's --allreduce-bench) with its rows.
struct AllreduceRow {
  std::string transport;  // mpi | nccl | none
  long long bytes = 0;
  double time_us = 0;  // per allreduce: mean over iterations, then ranks
  double busbw_gbs = 0;
  long long wrong = 0;  // wrong elements, summed over ranks
};
struct AllreduceRun {
  std::int64_t id = 0;
  std::string condition;
  std::string launcher;
  int np = 1;
  FactorLevels levels = {};
  std::vector<AllreduceRow> rows = {};
};

// Which of the loaded runs an analysis uses: `--only FACTOR=LEVEL` and `--condition`. (Which
// instances, and the warm-up left out of each run, are InstanceQuery's: instances.hpp.)
struct RunFilter {
  std::vector<std::pair<std::string, std::string>> only;
  std::optional<std::string> condition = std::nullopt;

  // From the command line's `--only` arguments; throws InputError naming one without '=' or
  // with an empty factor.
  static RunFilter parse(const std::vector<std::string>& only,
                         std::optional<std::string> condition = std::nullopt);
  bool empty() const { return only.empty() && !condition; }
  // "model=vgg16, np=2": the filters as given, for notes.
  std::string describe() const;
};

// The experiment file's "repetitions": {"min", "max", "precision"} (precision-driven runs,
// docs/experiment-file.md): what a cell's stop is judged by.
struct RepetitionRule {
  int min_runs = 3;
  int max_runs = 20;
  double precision = 0.02;
};

struct RunSet {
  std::string experiment;
  std::vector<std::int64_t> instances;  // oldest first
  std::vector<Run> runs;                // ok runs with epochs, in run-id order
  // The experiment file's order (first instance); empty when unread.
  std::vector<std::string> condition_order;
  std::vector<std::pair<std::string, std::vector<std::string>>> level_order;
  Labels labels;          // the experiment file's "labels"
  std::string spec_json;  // the experiment file the (first) instance ran (its setup: setup.hpp)
  std::optional<RepetitionRule> repetition_rule;  // its precision rule, if it has one
  Provenance provenance;
  std::vector<std::string> notes;            // which instances, what warm-up was left out
  std::vector<std::string> failures;         // runs that are not ok, per group (failure_notes)
  std::vector<AllreduceRun> allreduce_runs;  // only when loaded with them
  int warmup_epochs = 0;                     // left out of each run (WarmupRule)
  std::string warmup_origin;
  std::size_t runs_without_epochs = 0;  // ok runs, not allreduce benchmarks, without an epoch
  RunFilter filter = {};                // the filter applied (apply_filter)
  std::size_t filtered_out = 0;         // runs with epochs it left out

  // The factors the runs have: condition, launcher, np, then the file's own in order of
  // appearance ("group" is not one).
  std::vector<std::string> factors() const;
  // The order of `factor`'s levels a reader expects: the file's for condition and the file's
  // factors, np ascending, and for group the report's row order (the file's conditions, then its
  // levels, single before launched, np), so stats names letters as report does; empty when
  // unknown (then: order of appearance).
  std::vector<std::string> level_order_of(std::string_view factor) const;
};

// Keeps the runs `filter` selects and returns how many were left out. Throws InputError when the
// condition or a filter's factor or level is not in the set (naming what it has).
std::size_t apply_filter(RunSet& set, const RunFilter& filter);

// Drops epochs 1..warmup of every run that has more than `warmup` epochs; returns how many runs
// were too short to drop anything from (they keep all their epochs).
std::size_t drop_warmup_epochs(std::vector<Run>& runs, int warmup);

}  // namespace scalebench::report
