// The oneDNN plumbing shared by the CPU layers: one engine and one stream per process, and a
// staging buffer that puts a tensor into the memory format a primitive asked for.
#pragma once

#include <array>
#include <cstddef>
#include <oneapi/dnnl/dnnl.hpp>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace scalebench::trainer::cpu {

using dnnl::memory;
using Dims = memory::dims;

// The CPU engine and its in-order stream, created on first use and kept for the process.
dnnl::engine& engine();
dnnl::stream& stream();

// Runs `p` on the stream with `args`.
void execute(const dnnl::primitive& p, const std::unordered_map<int, memory>& args);

// A float32 descriptor in a plain (row-major) format for `dims`: nc, nchw, oihw, goihw, x.
// any_desc: the same with the format left to the primitive (format_tag::any).
memory::desc plain_desc(const Dims& dims);
memory::desc any_desc(const Dims& dims);
// A model::Pair (height, width) as oneDNN dims.
inline Dims to_dims(const std::array<int, 2>& pair) { return {pair[0], pair[1]}; }
// Throws std::invalid_argument naming `layer` unless `src` is 4-D (N×C×H×W).
void require_4d(const memory::desc& src, std::string_view layer);
// Output extent of a window of `kernel` with `stride` over `size` padded by begin and end; throws
// std::invalid_argument naming `layer` when the kernel is larger than the padded input.
memory::dim output_extent(memory::dim size, int kernel, int stride, int begin, int end,
                          std::string_view layer);
// True when `desc` is the plain row-major layout of its dims (so a float* walks it in order).
bool is_plain(const memory::desc& desc);
// Number of floats in the buffer of `desc` (padding of blocked formats included).
std::size_t float_count(const memory::desc& desc);
// Zero-filled host memory for big tensors (a model's activations and gradients), aligned for
// oneDNN and, from 2 MiB up, in transparent huge pages: first touching gigabytes of 4 KiB pages
// cost ResNet-50 (batch 32) over 30 s of page faults in its first step on a VM.
class HostBuffer {
 public:
  explicit HostBuffer(std::size_t bytes);
  HostBuffer(HostBuffer&& other) noexcept;
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer();
  float* data() const { return static_cast<float*>(data_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void release();
  void* data_ = nullptr;
  void* map_ = nullptr;  // the mmap'd region (big buffers), or null (aligned_alloc)
  std::size_t bytes_ = 0, mapped_ = 0;
};

// A memory on the engine, allocated by oneDNN and zero-filled (padding must stay zero).
memory make_memory(const memory::desc& desc);
// A memory over a caller's buffer (which must outlive it).
memory wrap(const memory::desc& desc, const float* data);
inline float* data_of(const memory& m) { return static_cast<float*>(m.get_data_handle()); }
// Copies `from` into `to` (different formats allowed) through a cached-by-oneDNN reorder.
void reorder(const memory& from, const memory& to);

// A tensor the caller holds in `user` format that a primitive wants in `wanted` format. When
// the two agree nothing is copied; otherwise a buffer and the reorders are made once, here.
class Staged {
 public:
  Staged() = default;
  Staged(const memory::desc& user, const memory::desc& wanted);
  bool copies() const { return copies_; }
  const memory::desc& wanted() const { return wanted_; }
  // The tensor in the wanted format, read from `user` (reordered when the formats differ).
  memory in(const memory& user);
  // Where the primitive should write: `user` itself, or the staging buffer; call out() after.
  memory target(const memory& user);
  // Copies the staging buffer back into `user` (a no-op when no staging is needed).
  void out(const memory& user);

 private:
  memory::desc wanted_;
  bool copies_ = false;
  memory buffer_;
  dnnl::reorder to_wanted_, to_user_;
};

}  // namespace scalebench::trainer::cpu
