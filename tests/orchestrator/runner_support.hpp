// What the runner tests share: the instance record a `scalebench run` would make.
#pragma once

#include "db/database.hpp"
#include "orchestrator/experiment.hpp"

namespace scalebench::test {

inline db::ExperimentRecord context_for(const orchestrator::Experiment& experiment) {
  db::ExperimentRecord record;
  record.name = experiment.name;
  record.source_path = "fake.json";
  record.spec_json = experiment.spec_json;
  record.started_at = "2026-11-22T00:00:00.000000Z";
  record.host = "test";
  record.cpu_count = 2;
  record.scalebench_version = "test";
  return record;
}

}  // namespace scalebench::test
