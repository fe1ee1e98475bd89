// What `scalebench run` settles before its first run: where the programs it ships are (the
// trainer, the tagging wrapper), the randomized order's seed, and the instance's record. The
// rules live here, beside the runner that uses them; cli/run_command.cpp only calls them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "db/database.hpp"
#include "orchestrator/experiment.hpp"

namespace scalebench::orchestrator {

// A program that ships with this scalebench (scalebench-train, scalebench-tag): next to our own
// executable, else its bare name (found on PATH when started).
std::string shipped_program(const std::string& name);

// The matrix's options for this machine: the shipped trainer and wrapper, root or not, the
// Python torchrun runs scripts with (its own: the first line of the torchrun on PATH), and
// `max_runs`. The seed is choose_order_seed's.
ExpandOptions machine_expand_options(std::size_t max_runs);

// The seed rule of a randomized order without "seed" in the file: the seed stored with the
// latest instance of the same spec in `database` (so a resumed instance keeps its order), else
// one drawn now (stored with the new instance). Absent for an interleaved order or a file seed.
std::optional<std::uint64_t> choose_order_seed(const Experiment& experiment,
                                               const db::Database* database);

// The instance's record: the experiment's name, file, spec, factors and order, the start time,
// host, core count and scalebench's version, and the order's seed (order_seed) when it has one.
db::ExperimentRecord instance_record(const Experiment& experiment, const std::string& source_path,
                                     std::optional<std::uint64_t> seed);

}  // namespace scalebench::orchestrator
