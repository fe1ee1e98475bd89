// The CPU backend: oneDNN GEMMs, the reference for every other backend.
#pragma once

#include <memory>

#include "trainer/backend.hpp"

namespace scalebench::trainer::cpu {

std::unique_ptr<Backend> make_cpu_backend();

}  // namespace scalebench::trainer::cpu
