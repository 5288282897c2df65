#pragma once
/// Host-side pieces shared by the Hopper-native programs of models/cuda/hopper (wgmma_gemm.cu,
/// flash3_attention.cu): driver-API error checks, the tensor maps their TMA boxes use, random
/// fp16 inputs, the SM-clock probe's reading, downloads, and the --sms green context. Benchmark
/// programs, not library code: a failed check exits with 1 (ubench::fail).

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "models/cuda/green_context.h"
#include "models/cuda/ubench/ubench_common.cuh"

/// Every CUDA driver call goes through CU_CHECK.
#define CU_CHECK(call)                                                             \
  do {                                                                             \
    CUresult r_ = (call);                                                          \
    if (r_ != CUDA_SUCCESS) {                                                      \
      const char* s_ = nullptr;                                                    \
      cuGetErrorString(r_, &s_);                                                   \
      ::ubench::fail(__FILE__, __LINE__, #call, s_ ? s_ : "unknown driver error"); \
    }                                                                              \
  } while (0)

namespace memwall::hopper {

/// A 3-D row-major fp16 tensor [batch][rows][cols] with a box of box_cols x box_rows x 1 in the
/// 128-byte swizzle (box_cols must be 64: one 128-byte row). Rows or columns past the tensor's
/// read as zero and are not stored.
inline CUtensorMap make_map(const __half* base, int cols, int rows, int batch, int box_cols,
                            int box_rows) {
  CUtensorMap map;
  const cuuint64_t dims[3] = {cuuint64_t(cols), cuuint64_t(rows), cuuint64_t(batch)};
  const cuuint64_t strides[2] = {cuuint64_t(cols) * 2, cuuint64_t(cols) * rows * 2};
  const cuuint32_t box[3] = {cuuint32_t(box_cols), cuuint32_t(box_rows), 1};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  CU_CHECK(cuTensorMapEncodeTiled(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, const_cast<__half*>(base), dims, strides, box,
      elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

/// x[i] = scale · u(i, seed), u uniform in [-1, 1) from a hash of the index.
static __global__ void fill_random(__half* x, size_t n, unsigned seed, float scale) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    h *= 3266489917u;
    h ^= h >> 16;
    x[i] = __float2half(scale * (float(h & 0xFFFFFF) / float(0x1000000) * 2.0f - 1.0f));
  }
}

/// n values of device memory `d`, copied on `stream`.
template <class T>
std::vector<T> download(const T* d, size_t n, cudaStream_t stream) {
  std::vector<T> h(n);
  UB_CHECK(cudaMemcpyAsync(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost, stream));
  UB_CHECK(cudaStreamSynchronize(stream));
  return h;
}

/// The SM clock in MHz of the last launch that wrote `probe` (4 words: CTA 0's clock64 and
/// %globaltimer at its start and end); 0 when the timer did not advance.
inline double probe_mhz(const unsigned long long* probe, cudaStream_t stream) {
  unsigned long long h[4];
  UB_CHECK(cudaMemcpyAsync(h, probe, sizeof h, cudaMemcpyDeviceToHost, stream));
  UB_CHECK(cudaStreamSynchronize(stream));
  return h[3] > h[1] ? double(h[2] - h[0]) / double(h[3] - h[1]) * 1e3 : 0.0;
}

/// --sms N: a green context of (at least) N SMs whose stream every launch, copy and event uses,
/// its SM count the persistent grids' size; the SMs its kernels really ran on are checked.
/// Sets `stream` and `sm_count`; returns the context (keep it alive), or null when n is 0.
inline std::unique_ptr<memwall::cuda::GreenContext> green_context(int n, cudaStream_t& stream,
                                                                  int& sm_count) {
  if (n <= 0) return nullptr;
  auto green = std::make_unique<memwall::cuda::GreenContext>(0, n);
  stream = green->stream();
  sm_count = green->sm_count();
  const std::vector<int> used = memwall::cuda::sms_used(stream);
  std::fprintf(stderr, "green context: asked %d SMs, holds %d (%s), kernels ran on %zu SMs\n", n,
               sm_count, green->how().c_str(), used.size());
  UB_REQUIRE(int(used.size()) <= sm_count,
             "the green context's kernels ran on more SMs than it holds");
  return green;
}

}  // namespace memwall::hopper
