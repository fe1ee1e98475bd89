// The setup of a study as a methods section states it (issue 37): the program and its settings,
// the images per epoch, the warm-up left out, how epochs were marked, the launchers and the
// machine, from the experiment file the runs were measured with, the runs and their provenance.
// Pure: the RunSet carries the file's text (RunSet::spec_json).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report/data/run_set.hpp"

namespace scalebench::report {

// What, and its text: {"Program", "scalebench-train: model mlp, dataset fashion-mnist, ..."}.
using StudySetup = std::vector<std::pair<std::string, std::string>>;

// Program, Images per epoch, Warm-up, Epochs marked by, Conditions (each with its launcher and np
// values, named by the set's labels), Machine: each where known, in that order.
StudySetup study_setup(const RunSet& set);

}  // namespace scalebench::report
