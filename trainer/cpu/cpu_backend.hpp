// The CPU backend: oneDNN GEMMs, the reference for every other backend.
#pragma once

#include <memory>

#include "trainer/backend.hpp"

namespace scalebench::trainer::cpu {

std::unique_ptr<Backend> make_cpu_backend();

// The host set-up the CPU backend needs (done by its make_model): `threads` OpenMP threads for
// oneDNN, each flushing denormals to zero (FTZ and DAZ).
void set_threads(int threads);

}  // namespace scalebench::trainer::cpu
