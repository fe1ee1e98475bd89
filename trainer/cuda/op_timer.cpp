#include "trainer/cuda/op_timer.hpp"

#include <stdexcept>

#include "trainer/cuda/check.hpp"

namespace scalebench::trainer::cuda {

OpEventTimer::OpEventTimer(std::size_t nodes)
    : nodes_(nodes),
      start_(2 * nodes + 2, nullptr),
      stop_(2 * nodes + 2, nullptr),
      recorded_(2 * nodes + 2, 0) {
  try {
    for (std::size_t s = 0; s < start_.size(); ++s) {
      SB_CHECK(cudaEventCreate(&start_[s]));
      SB_CHECK(cudaEventCreate(&stop_[s]));
    }
  } catch (...) {
    destroy_events();  // the ones made so far
    throw;
  }
}

OpEventTimer::~OpEventTimer() { destroy_events(); }

void OpEventTimer::destroy_events() {
  for (std::size_t s = 0; s < start_.size(); ++s) {
    if (start_[s] != nullptr) (void)cudaEventDestroy(start_[s]);
    if (stop_[s] != nullptr) (void)cudaEventDestroy(stop_[s]);
    start_[s] = stop_[s] = nullptr;
  }
}

std::size_t OpEventTimer::slot(Part part, std::size_t node) const {
  switch (part) {
    case Part::forward:
    case Part::backward:
      if (node >= nodes_) throw std::out_of_range("op timer: no such graph node");
      return 2 * node + (part == Part::backward ? 1 : 0);
    case Part::loss:
      return 2 * nodes_;
    case Part::optimizer:
      return 2 * nodes_ + 1;
  }
  throw std::logic_error("op timer: unknown part");
}

void OpEventTimer::begin(Part part, std::size_t node, cudaStream_t stream) {
  SB_CHECK(cudaEventRecord(start_[slot(part, node)], stream));
}

void OpEventTimer::end(Part part, std::size_t node, cudaStream_t stream) {
  const std::size_t s = slot(part, node);
  SB_CHECK(cudaEventRecord(stop_[s], stream));
  recorded_[s] = 1;
  last_ = stop_[s];
}

void OpEventTimer::collect(const Context& context, OpTimes& times) {
  if (last_ == nullptr) return;
  context.wait(last_);
  times.nodes.resize(nodes_);
  for (std::size_t s = 0; s < recorded_.size(); ++s) {
    if (recorded_[s] == 0) continue;
    float ms = 0.0F;
    SB_CHECK(cudaEventElapsedTime(&ms, start_[s], stop_[s]));
    const double seconds = static_cast<double>(ms) * 1e-3;
    if (s == 2 * nodes_) {
      times.loss += seconds;
    } else if (s == 2 * nodes_ + 1) {
      times.optimizer += seconds;
    } else if (s % 2 == 0) {
      times.nodes[s / 2].forward += seconds;
    } else {
      times.nodes[s / 2].backward += seconds;
    }
    recorded_[s] = 0;
  }
  last_ = nullptr;
}

}  // namespace scalebench::trainer::cuda
