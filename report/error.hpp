// The report's two errors, below every layer of it (data, analysis, export) so that none has to
// include another to throw: ReportError for a report that cannot be built or written, InputError
// for bad input data. Both derive from scalebench::Error (util/error.hpp): the CLI's one catch.
#pragma once

#include "util/error.hpp"

namespace scalebench::report {

// Input the report cannot be built or rendered from; the message says what to do.
class ReportError : public Error {
 public:
  using Error::Error;
};

// Bad input data: the message names the file, the line and the column.
class InputError : public Error {
 public:
  using Error::Error;
};

}  // namespace scalebench::report
