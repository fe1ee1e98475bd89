// The stored records the report's analysis reads, as the data layer hands them up: an epoch with
// its run's condition, launcher, np and factor levels, a run's factor levels, the provenance.
// The analysis names these, never the database (scripts/check-includes.sh).
#pragma once

#include <string>
#include <string_view>

#include "db/database.hpp"

namespace scalebench::report {

using EpochSample = db::EpochSample;
using FactorLevels = db::FactorLevels;
using Provenance = db::Provenance;

// "<condition>" for launcher "single", else "<condition> np=<np>"; the levels of the experiment
// file's factors go between them: "hvd model=vgg16 np=2".
std::string group_label(std::string_view condition, std::string_view launcher, int np,
                        const FactorLevels& levels = {});

}  // namespace scalebench::report
