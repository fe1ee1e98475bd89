// Merging one scalebench database into another: the side files `scalebench run` writes when the
// results database cannot take a run (docs/database.md, "Busy databases and side files"), or any
// database of runs. Only the public Database API is used, so a side file of any schema version
// (migrated when opened) merges the same way.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "db/database.hpp"

namespace scalebench::db {

// A run of the side database whose place `into` already holds: the same instance and cell
// (condition, factor levels, np) and repetition, with the same attempt or, when both are ok, any
// attempt (a cell counts one ok run per repetition). Nothing was merged.
class DuplicateRunError : public DatabaseError {
 public:
  using DatabaseError::DatabaseError;
};

struct MergeOutcome {
  std::size_t runs = 0;               // runs written into the target
  std::vector<std::string> skipped;   // duplicates skipped (skip_duplicates), each said
  std::size_t instances_created = 0;  // instances the target did not have
};

// Writes every run of `side` (its epochs with the ranks' ends, lines, allreduce rows, factor
// levels and provenance) into `into`, under the target's copy of its instance (the instance with
// the same spec hash, start time, host and name), created with its provenance when absent. Runs
// `into` already holds are refused before anything is written (DuplicateRunError naming them, up
// to five), or skipped with `skip_duplicates`. The whole merge is one transaction.
MergeOutcome merge_database(Database& into, const Database& side, const std::string& side_name,
                            bool skip_duplicates = false);

}  // namespace scalebench::db
