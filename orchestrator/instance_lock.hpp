// One `scalebench run` at a time per experiment instance: the lock a run (or --resume) takes
// before it decides which cells to run, so that two invocations never run the same cells.
#pragma once

#include <filesystem>
#include <string>

#include "util/error.hpp"
#include "util/file_lock.hpp"

namespace scalebench::orchestrator {

// Another process holds the instance: the message names it (pid, host, since) and the lock file.
class InstanceBusy : public Error {
 public:
  using Error::Error;
};

// The lock file of an experiment spec (db::spec_hash) in a database: "<database>.run-<16 hex
// digits of the hash>.lock", beside the database. Per spec, not per database: two different
// experiments may run into one database at the same time; the same spec is the instance that
// `--resume` would continue (or a new instance of it, which would measure alongside the other).
std::filesystem::path instance_lock_path(const std::string& database_path,
                                         const std::string& spec_hash);

// Holds the lock for `experiment` (its name, for the message) until destroyed; the kernel gives
// it back if this process dies. Throws InstanceBusy when another process holds it.
util::FileLock lock_instance(const std::string& database_path, const std::string& spec_hash,
                             const std::string& experiment);

}  // namespace scalebench::orchestrator
