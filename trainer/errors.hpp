// The trainer's exception types. Library code throws these; main() turns them into one line
// `scalebench-train: error: ...` on stderr and a non-zero exit (MPI_Abort under a launcher).
#pragma once

#include <stdexcept>

#include "util/error.hpp"

namespace scalebench::trainer {

// Base of every error the trainer reports to the user.
class TrainerError : public Error {
 public:
  using Error::Error;
};

// A bad command line or an inconsistent combination of options.
class UsageError : public TrainerError {
 public:
  using TrainerError::TrainerError;
};

// A data set that cannot be read or is malformed; the message names the file.
class DatasetError : public TrainerError {
 public:
  using TrainerError::TrainerError;
};

// A backend that is missing from this build or cannot do what was asked.
class BackendError : public TrainerError {
 public:
  using TrainerError::TrainerError;
};

}  // namespace scalebench::trainer
