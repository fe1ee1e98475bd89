// `scalebench compare`: two experiments (or two instances, or two databases) cell by cell on
// run-level statistics: the means of the runs' mean epoch times, their ratio with a confidence
// interval, Welch's test, and a verdict at a threshold the user sets. Definitions:
// docs/statistics.md, "Comparing two experiments".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/data/observations.hpp"
#include "report/error.hpp"

namespace scalebench::report {

struct CompareOptions {
  double confidence = 0.95;
  double threshold = 0.02;  // a change smaller than this fraction of the baseline is no change
};

// What a cell's evidence says; "too few runs" when either side has fewer than two runs.
enum class Verdict { Slower, Faster, NoDifference, TooFewRuns };
std::string verdict_name(Verdict verdict);

struct CompareRow {
  std::string cell;  // the group label: condition, factor levels, np
  std::size_t baseline_runs = 0;
  std::size_t candidate_runs = 0;
  double baseline_mean = 0;  // mean of the runs' mean epoch times (s)
  double candidate_mean = 0;
  double ratio = 0;  // candidate / baseline epoch time: above 1 is slower
  std::optional<double> ratio_lower, ratio_upper;  // CI (delta method on the log, Welch d.f.)
  std::optional<double> p;  // the ratio interval's own test (Welch t of the log ratio)
  Verdict verdict = Verdict::TooFewRuns;
  // The whole interval lies inside 1 -/+ threshold: the data show that any change is smaller
  // than the threshold (an equivalence test), not only that none was detected.
  bool within_threshold = false;
};

struct Comparison {
  std::string baseline;  // what each side is: database, experiment, instances
  std::string candidate;
  CompareOptions options;
  std::vector<CompareRow> rows;               // the cells both sides measured
  std::vector<std::string> only_in_baseline;  // cells one side lacks, said not dropped
  std::vector<std::string> only_in_candidate;
  std::vector<std::string> notes;
};

// Both sides as Observations of one factor "group" on unit "run" (observations_from_database).
// Verdicts: Slower or Faster when Welch's p < 1 - confidence and the ratio is outside
// 1 -/+ threshold; NoDifference otherwise (with within_threshold when the interval shows it).
// Throws InputError when the two sides share no cell.
Comparison compare_observations(const Observations& baseline, const Observations& candidate,
                                const CompareOptions& options = {});

// Cells whose verdict is Slower with a slowdown (ratio - 1) of at least `fraction`.
std::vector<const CompareRow*> slower_than(const Comparison& comparison, double fraction);

}  // namespace scalebench::report
