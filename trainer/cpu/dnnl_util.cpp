#include "trainer/cpu/dnnl_util.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

namespace scalebench::trainer::cpu {

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::stream& stream() {
  static dnnl::stream s(engine());
  return s;
}

void execute(const dnnl::primitive& p, const std::unordered_map<int, memory>& args) {
  p.execute(stream(), args);
}

memory::desc plain_desc(const Dims& dims) {
  using tag = memory::format_tag;
  tag t = tag::undef;
  switch (dims.size()) {
    case 1:
      t = tag::a;
      break;
    case 2:
      t = tag::ab;
      break;
    case 3:
      t = tag::abc;
      break;
    case 4:
      t = tag::abcd;
      break;
    case 5:
      t = tag::abcde;
      break;
    default:
      throw std::invalid_argument(fmt::format("no plain format for {} dims", dims.size()));
  }
  return memory::desc(dims, memory::data_type::f32, t);
}

memory::desc any_desc(const Dims& dims) {
  return memory::desc(dims, memory::data_type::f32, memory::format_tag::any);
}

void require_4d(const memory::desc& src, std::string_view layer) {
  if (src.dims().size() != 4) {
    throw std::invalid_argument(
        fmt::format("{} needs a 4-D input (N×C×H×W), got {} dimensions", layer, src.dims().size()));
  }
}

memory::dim output_extent(memory::dim size, int kernel, int stride, int begin, int end,
                          std::string_view layer) {
  const memory::dim padded = size + begin + end;
  if (padded < kernel) {
    throw std::invalid_argument(
        fmt::format("{}: kernel {} is larger than the padded input {}", layer, kernel, padded));
  }
  return (padded - kernel) / stride + 1;
}

bool is_plain(const memory::desc& desc) { return desc == plain_desc(desc.dims()); }

std::size_t float_count(const memory::desc& desc) { return desc.get_size() / sizeof(float); }

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
}

HostBuffer::HostBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes < kHugePage) {
    data_ = std::aligned_alloc(64, (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64);
    if (data_ == nullptr) throw std::bad_alloc();
    std::memset(data_, 0, bytes);
    return;
  }
  // Anonymous pages arrive zero-filled: no memset (the kernel clears each page once, on first
  // touch). Over-allocate by one huge page to start on a 2 MiB boundary.
  mapped_ = (bytes + 2 * kHugePage - 1) / kHugePage * kHugePage;
  void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  map_ = p;
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  data_ = reinterpret_cast<void*>((address + kHugePage - 1) / kHugePage * kHugePage);
  (void)madvise(data_, mapped_ - kHugePage, MADV_HUGEPAGE);  // advice only: fine if refused
}

void HostBuffer::release() {
  if (map_ != nullptr) {
    munmap(map_, mapped_);
  } else {
    std::free(data_);
  }
  data_ = map_ = nullptr;
  bytes_ = mapped_ = 0;
}

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      map_(std::exchange(other.map_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      mapped_(std::exchange(other.mapped_, 0)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    map_ = std::exchange(other.map_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
  }
  return *this;
}

HostBuffer::~HostBuffer() { release(); }

memory make_memory(const memory::desc& desc) {
  memory m(desc, engine());
  std::memset(m.get_data_handle(), 0, desc.get_size());
  return m;
}

memory wrap(const memory::desc& desc, const float* data) {
  return memory(desc, engine(), const_cast<float*>(data));
}

void reorder(const memory& from, const memory& to) {
  dnnl::reorder(from, to).execute(stream(), const_cast<memory&>(from), const_cast<memory&>(to));
}

Staged::Staged(const memory::desc& user, const memory::desc& wanted)
    : wanted_(wanted), copies_(user != wanted) {
  if (!copies_) return;
  buffer_ = make_memory(wanted);
  to_wanted_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), user, engine(), wanted));
  to_user_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), wanted, engine(), user));
}

memory Staged::in(const memory& user) {
  if (!copies_) return user;
  to_wanted_.execute(stream(), {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, buffer_}});
  return buffer_;
}

memory Staged::target(const memory& user) { return copies_ ? buffer_ : user; }

void Staged::out(const memory& user) {
  if (!copies_) return;
  to_user_.execute(stream(), {{DNNL_ARG_FROM, buffer_}, {DNNL_ARG_TO, user}});
}

}  // namespace scalebench::trainer::cpu
