// Run under `mpirun -np N` by tests/trainer/test_distributed.cpp (not a test file itself: it
// needs MPI ranks, which a doctest case cannot start). For several bucket sizes, with and without
// overlap, with and without gradients-ready reports, it fakes a backward pass over "layers" of a
// flat buffer and checks that GradientReducer leaves the mean over ranks in every element.
//
// The buffer starts each step as NaN and a layer's values are written only just before its
// report, as backward would: a bucket started too early would reduce NaN, and the NaN would show
// in the result. After each report the reducer must have started exactly the complete buckets.
// Prints one line per failure on stderr and `reducer_check: N configurations ok` on rank 0; exits
// 1 on any failure.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "trainer/distributed.hpp"

namespace dist = scalebench::trainer::dist;

namespace {

int g_failures = 0;

void fail(const std::string& what) {
  std::fprintf(stderr, "reducer_check: rank %d: %s\n", dist::rank(), what.c_str());
  ++g_failures;
}

// Rank r's gradient j in step s: distinct per rank, exact in float, and so is the sum.
float value(int rank, int step, std::size_t j) {
  return static_cast<float>(j % 97) * 0.5f + static_cast<float>(rank * 1024 + step);
}

void check(std::size_t elements, std::size_t bucket_bytes, bool overlap, bool report) {
  const std::string name =
      "elements=" + std::to_string(elements) + " bucket_bytes=" + std::to_string(bucket_bytes) +
      " overlap=" + (overlap ? "on" : "off") + " reports=" + (report ? "yes" : "no");
  // Layer boundaries (first element of each layer), uneven on purpose, some layers empty.
  std::vector<std::size_t> starts{0, 1, 7, 7, elements / 3, elements / 3 + 1, elements - 2};
  std::vector<float> gradients(elements);
  dist::GradientReducer reducer(gradients, bucket_bytes, overlap);
  const std::size_t all = reducer.buckets().size();
  for (int step = 0; step < 3; ++step) {  // the reducer is reused across steps
    std::fill(gradients.begin(), gradients.end(), std::numeric_limits<float>::quiet_NaN());
    std::size_t end = elements;
    for (std::size_t i = starts.size(); i-- > 0;) {
      const std::size_t begin = std::min(starts[i], end);
      for (std::size_t j = begin; j < end; ++j) gradients[j] = value(dist::rank(), step, j);
      end = begin;
      if (!report) continue;
      reducer.gradients_ready(begin);
      const std::size_t expected =
          overlap && dist::size() > 1 ? dist::complete_buckets(reducer.buckets(), begin) : 0;
      if (reducer.launched() != expected) {
        fail(name + ": " + std::to_string(reducer.launched()) + " buckets started after offset " +
             std::to_string(begin) + ", expected " + std::to_string(expected));
      }
    }
    reducer.finish();
    if (reducer.launched() != 0) fail(name + ": launched() not reset by finish()");
    const std::size_t early = overlap && report && dist::size() > 1 ? all : 0;
    if (reducer.launched_early() != early) {
      fail(name + ": launched_early " + std::to_string(reducer.launched_early()) + ", expected " +
           std::to_string(early));
    }
    for (std::size_t j = 0; j < elements; ++j) {
      double mean = 0;
      for (int r = 0; r < dist::size(); ++r) mean += value(r, step, j);
      mean /= dist::size();
      if (!(std::fabs(gradients[j] - mean) <= 1e-6 * std::fmax(1.0, std::fabs(mean)))) {
        fail(name + ": step " + std::to_string(step) + " element " + std::to_string(j) + " is " +
             std::to_string(gradients[j]) + ", mean " + std::to_string(mean));
        break;
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  dist::init(&argc, &argv);
  int configurations = 0;
  // 1 float per bucket, uneven buckets, a bucket size that divides the buffer, the whole buffer
  // in one bucket exactly, and Horovod's 64 MiB default.
  for (const std::size_t bytes :
       {std::size_t{4}, std::size_t{40}, std::size_t{1000}, std::size_t{4000}, std::size_t{4004},
        dist::kDefaultFusionBytes}) {
    for (const bool overlap : {false, true}) {
      for (const bool report : {false, true}) {
        check(1001, bytes, overlap, report);
        ++configurations;
      }
    }
  }
  dist::barrier();
  if (g_failures == 0) {
    dist::print0("reducer_check: np=" + std::to_string(dist::size()) + " " +
                 std::to_string(configurations) + " configurations ok");
  }
  const bool ok = g_failures == 0;
  dist::finalize();
  return ok ? 0 : 1;
}
