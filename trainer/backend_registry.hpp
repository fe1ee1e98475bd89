// Which compute backends this build has. backend_registry.cpp is the only file that knows
// whether CUDA was compiled in.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trainer/backend.hpp"

namespace scalebench::trainer {

// Names of the compiled-in backends, the default ("cpu") first.
std::vector<std::string> available_backends();
// The backend called `name`, or nullptr when this build does not have it.
const Backend* try_find_backend(std::string_view name);
// Like try_find_backend, but throws BackendError listing the compiled-in backends.
const Backend& find_backend(std::string_view name);

}  // namespace scalebench::trainer
