// The two fuzz targets, shared by the seeded harness run by ctest (test_fuzz.cpp) and the
// libFuzzer entry points (*_fuzzer.cpp). Each feeds one input to the code under test and checks
// invariants beyond "no crash"; a broken invariant throws InvariantBroken.
#pragma once

#include <stdexcept>
#include <string_view>

namespace scalebench::fuzz {

class InvariantBroken : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// orchestrator/line_parser.hpp: every parser on the input taken as one line, sanitize_utf8, and
// LineSplitter on the input cut into chunks at places the input's own bytes choose.
void line_parser_target(std::string_view input);

// parse_experiment on the input: an Experiment whose spec round-trips and whose expand_matrix
// respects the limits (or throws ExperimentError), or an ExperimentError of one printable line.
void experiment_target(std::string_view input);

}  // namespace scalebench::fuzz
