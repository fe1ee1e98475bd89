#include "orchestrator/instance_lock.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>

#include "orchestrator/provenance.hpp"
#include "orchestrator/runner.hpp"

namespace scalebench::orchestrator {

std::filesystem::path instance_lock_path(const std::string& database_path,
                                         const std::string& spec_hash) {
  // "fnv1a64:0123456789abcdef": the digits only, whatever the prefix.
  std::string digits;
  for (const char c : spec_hash.substr(spec_hash.find(':') + 1))
    if (std::isalnum(static_cast<unsigned char>(c)) && digits.size() < 32) digits += c;
  return database_path + ".run-" + (digits.empty() ? std::string("spec") : digits) + ".lock";
}

util::FileLock lock_instance(const std::string& database_path, const std::string& spec_hash,
                             const std::string& experiment) {
  const auto path = instance_lock_path(database_path, spec_hash);
  const std::string holder =
      fmt::format("pid {} on host {} since {}", ::getpid(), local_host_name(), now_iso8601_utc());
  std::string held_by;
  if (auto lock = util::FileLock::try_acquire(path, holder, &held_by)) return std::move(*lock);
  throw InstanceBusy(fmt::format(
      "experiment \"{}\" is already being run into {} by {} (lock {}); one `scalebench run` of an "
      "instance at a time: wait for it, or stop it and `scalebench run --resume`",
      experiment, database_path, held_by.empty() ? "another process" : held_by, path.string()));
}

}  // namespace scalebench::orchestrator
