/// How much of a footprint the L2 keeps from one kernel to the next: the measurement behind the
/// usable L2 capacity (efficiency.l2_capacity, fitted to 0.74 on the H200's attention kernels,
/// where a mechanism should stand instead).
///
/// For each footprint F of n 16 KiB steps per CTA (n = 2 … 64: 4.1 … 132 MiB on 132 SMs, every
/// size an exact multiple of the step on every SM count) and each mode:
///   read-read      pass 1 reads F, pass 2 reads F in the same order
///   read-reverse   pass 1 reads F, pass 2 reads F in the reverse order (the lines pass 1 touched
///                  last first: what an LRU L2 keeps is read before it is evicted)
///   write-read     pass 1 writes F, pass 2 reads F in the same order (dirty lines)
/// the L2 is first flushed by reading a 512 MiB buffer of other data (clean lines), then pass 1
/// and pass 2 run as two kernels, one CTA of 1024 threads per SM, CTA b on the b-th contiguous
/// chunk of F, its threads on consecutive 16-byte vectors (__ldcg / __stcg), one 16 KiB step
/// after another. Pass 2's time is the median of 5 such sequences (CUDA events); under Nsight
/// Compute (--once, one sequence per case) its DRAM bytes say what the L2 kept.
///
/// Usage: l2_reuse [--once] > reuse.csv   (any other argument: usage, exit 2)
///   mode,footprint_bytes,ctas,pass1_ms,pass2_ms,pass2_gbps
/// Kernel names for ncu: flush_read, first_read, first_write, second_read.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "ubench_common.cuh"

namespace {

constexpr size_t kMiB = size_t(1) << 20;
constexpr int kThreads = 1024;
constexpr size_t kStep = size_t(kThreads) * sizeof(uint4);  // bytes per CTA step: 16 KiB
constexpr size_t kFlushBytes = 512 * kMiB;
constexpr int kTimed = 5;
/// The footprints, in 16 KiB steps per CTA (x 2.0625 MiB on 132 SMs).
constexpr unsigned kStepsPerCta[] = {2,  4,  8,  12, 16, 18, 20, 21, 22,
                                     24, 26, 28, 30, 32, 36, 48, 64};

/// This thread's first vector of CTA b's chunk of `steps` 16 KiB steps.
template <class T>
__device__ __forceinline__ T* chunk(T* buf, unsigned long long steps) {
  return buf + size_t(blockIdx.x) * steps * kThreads + threadIdx.x;
}

__device__ __forceinline__ unsigned read_chunk(const uint4* buf, unsigned long long steps,
                                               bool reverse) {
  const uint4* p = chunk(buf, steps);
  unsigned acc = 0;
#pragma unroll 4
  for (unsigned long long s = 0; s < steps; ++s) {
    const unsigned long long k = reverse ? steps - 1 - s : s;
    const uint4 v = __ldcg(p + k * kThreads);
    acc += v.x ^ v.w;
  }
  return acc;
}

__global__ void __launch_bounds__(kThreads, 1)
    first_read(const uint4* buf, unsigned long long steps, unsigned* sum) {
  const unsigned acc = read_chunk(buf, steps, false);
  if (acc == 0x9e3779b9u) atomicAdd(sum, acc);  // keeps the loads
}

__global__ void __launch_bounds__(kThreads, 1)
    second_read(const uint4* buf, unsigned long long steps, int reverse, unsigned* sum) {
  const unsigned acc = read_chunk(buf, steps, reverse != 0);
  if (acc == 0x9e3779b9u) atomicAdd(sum, acc);
}

__global__ void __launch_bounds__(kThreads, 1) first_write(uint4* buf, unsigned long long steps) {
  uint4* p = chunk(buf, steps);
#pragma unroll 4
  for (unsigned long long s = 0; s < steps; ++s) {
    __stcg(p + s * kThreads, make_uint4(unsigned(s), threadIdx.x, blockIdx.x, 1));
  }
}

__global__ void __launch_bounds__(kThreads, 1)
    flush_read(const uint4* buf, unsigned long long steps, unsigned* sum) {
  const unsigned acc = read_chunk(buf, steps, false);
  if (acc == 0x9e3779b9u) atomicAdd(sum, acc);
}

enum class Mode { kReadRead, kReadReverse, kWriteRead };
constexpr const char* kModeNames[] = {"read-read", "read-reverse", "write-read"};

}  // namespace

int main(int argc, char** argv) {
  const bool once = argc == 2 && std::strcmp(argv[1], "--once") == 0;
  if (argc > 2 || (argc == 2 && !once)) {
    std::fprintf(stderr, "usage: l2_reuse [--once] > reuse.csv\n");
    return 2;
  }
  cudaDeviceProp prop{};
  UB_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int ctas = prop.multiProcessorCount;
  const int smem = ubench::one_cta_per_sm_smem_bytes(prop);
  ubench::require_one_cta_per_sm(first_read, kThreads, smem);
  ubench::require_one_cta_per_sm(second_read, kThreads, smem);
  ubench::require_one_cta_per_sm(first_write, kThreads, smem);
  ubench::require_one_cta_per_sm(flush_read, kThreads, smem);
  const size_t max_bytes = size_t(kStepsPerCta[std::size(kStepsPerCta) - 1]) * kStep * ctas;
  uint4* buf = nullptr;
  uint4* junk = nullptr;
  unsigned* sum = nullptr;
  UB_CHECK(cudaMalloc(&buf, max_bytes));
  UB_CHECK(cudaMalloc(&junk, kFlushBytes));
  UB_CHECK(cudaMalloc(&sum, sizeof(unsigned)));
  UB_CHECK(cudaMemset(buf, 1, max_bytes));
  UB_CHECK(cudaMemset(junk, 2, kFlushBytes));
  const unsigned long long flush_steps = kFlushBytes / (kStep * ctas);
  std::fprintf(stderr, "l2_reuse: %s, %d SMs, L2 %d bytes, persisting max %d, %s\n", prop.name,
               ctas, prop.l2CacheSize, prop.persistingL2CacheMaxSize,
               once ? "once per case (for ncu)" : "median of 5 per case");
  std::printf("mode,footprint_bytes,ctas,pass1_ms,pass2_ms,pass2_gbps\n");
  ubench::EventTimer timer;
  for (const Mode mode : {Mode::kReadRead, Mode::kReadReverse, Mode::kWriteRead}) {
    for (const unsigned long long steps : kStepsPerCta) {
      const size_t bytes = size_t(steps) * kStep * ctas;
      std::vector<float> pass1, pass2;
      for (int rep = 0; rep < (once ? 1 : kTimed); ++rep) {
        flush_read<<<ctas, kThreads, smem>>>(junk, flush_steps, sum);
        UB_CHECK_LAUNCH("flush_read");
        timer.start();
        if (mode == Mode::kWriteRead) {
          first_write<<<ctas, kThreads, smem>>>(buf, steps);
          UB_CHECK_LAUNCH("first_write");
        } else {
          first_read<<<ctas, kThreads, smem>>>(buf, steps, sum);
          UB_CHECK_LAUNCH("first_read");
        }
        pass1.push_back(timer.stop_ms());
        timer.start();
        second_read<<<ctas, kThreads, smem>>>(buf, steps, mode == Mode::kReadReverse, sum);
        UB_CHECK_LAUNCH("second_read");
        pass2.push_back(timer.stop_ms());
      }
      const double ms2 = ubench::median(pass2);
      std::printf("%s,%zu,%d,%.5f,%.5f,%.1f\n", kModeNames[int(mode)], bytes, ctas,
                  ubench::median(pass1), ms2, double(bytes) / (ms2 * 1e6));
    }
  }
  UB_CHECK(cudaDeviceSynchronize());
  cudaFree(buf);
  cudaFree(junk);
  cudaFree(sum);
  return 0;
}
