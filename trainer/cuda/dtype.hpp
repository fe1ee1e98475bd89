// The element type of a stored activation or activation gradient (--activation-type): fp32, or
// bf16 (its 16 bits; arithmetic on it is done in fp32). C++17, for cuda_kernels.cu too.
#pragma once

#include <cstddef>

namespace scalebench::trainer::cuda {

enum class DType { f32, bf16 };

inline std::size_t bytes_of(DType type) { return type == DType::bf16 ? 2 : 4; }
inline const char* dtype_name(DType type) { return type == DType::bf16 ? "bf16" : "fp32"; }

}  // namespace scalebench::trainer::cuda
