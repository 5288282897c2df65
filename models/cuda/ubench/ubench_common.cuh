#pragma once
/// Helpers shared by the H200 microbenchmarks of models/cuda/ubench: CUDA error checks that end
/// the program with one line naming the failed call, special-register reads, CUDA-event timing,
/// medians, and the dynamic shared-memory request that lets only one CTA onto each SM.
/// These are stand-alone benchmark programs, not library code: a failed check exits with 1.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace ubench {

[[noreturn]] inline void fail(const char* file, int line, const char* what, const char* why) {
  std::fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, why);
  std::exit(1);
}

inline void check(cudaError_t status, const char* what, const char* file, int line) {
  if (status != cudaSuccess) fail(file, line, what, cudaGetErrorString(status));
}

}  // namespace ubench

/// Every CUDA runtime call goes through UB_CHECK.
#define UB_CHECK(call) ::ubench::check((call), #call, __FILE__, __LINE__)
/// After every launch: configuration errors now, faults at the next checked synchronization.
#define UB_CHECK_LAUNCH(name) ::ubench::check(cudaGetLastError(), (name), __FILE__, __LINE__)
/// A result the benchmark relies on (a checksum, a placement) is what it should be.
#define UB_REQUIRE(cond, why)                                      \
  do {                                                             \
    if (!(cond)) ::ubench::fail(__FILE__, __LINE__, #cond, (why)); \
  } while (0)

namespace ubench {

/// %smid: the SM this thread runs on.
__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

/// %globaltimer: nanoseconds of the GPU's global timer (coarse ticks; use over long spans only).
__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

/// Reads `vecs` 16-byte words of `buf` through the L2 (ld.global.cg): launched over a buffer a few
/// times the L2's size, it leaves the L2 holding clean lines of `buf` only (writing would leave
/// them dirty, and a kernel timed after would pay their write-backs). `sink` is written only when
/// the words' fold hits a constant, which keeps the loads.
static __global__ void scrub_l2(const uint4* buf, size_t vecs, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vecs;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcg(buf + i);
    acc ^= v.x ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

/// Median of `values` (mean of the middle two for an even count); 0 for none.
template <class T>
double median(std::vector<T> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? double(values[n / 2])
                    : 0.5 * (double(values[n / 2 - 1]) + double(values[n / 2]));
}

/// Number of distinct values (the SMs a launch's CTAs ran on).
inline int count_distinct(std::vector<unsigned> values) {
  std::sort(values.begin(), values.end());
  return int(std::unique(values.begin(), values.end()) - values.begin());
}

/// Two CUDA events around work on one stream; stop_ms() waits for the stop event.
class EventTimer {
 public:
  EventTimer() {
    UB_CHECK(cudaEventCreate(&m_start));
    UB_CHECK(cudaEventCreate(&m_stop));
  }
  ~EventTimer() {
    cudaEventDestroy(m_start);
    cudaEventDestroy(m_stop);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  void start(cudaStream_t stream = nullptr) { UB_CHECK(cudaEventRecord(m_start, stream)); }
  /// Milliseconds between start() and now on `stream`.
  float stop_ms(cudaStream_t stream = nullptr) {
    UB_CHECK(cudaEventRecord(m_stop, stream));
    UB_CHECK(cudaEventSynchronize(m_stop));
    float ms = 0.0f;
    UB_CHECK(cudaEventElapsedTime(&ms, m_start, m_stop));
    return ms;
  }

 private:
  cudaEvent_t m_start{};
  cudaEvent_t m_stop{};
};

/// Dynamic shared memory, in bytes, that leaves room for one CTA per SM only: a little over
/// half of what one SM has.
inline int one_cta_per_sm_smem_bytes(const cudaDeviceProp& prop) {
  const int bytes = int(prop.sharedMemPerMultiprocessor / 2 + 4096);
  UB_REQUIRE(bytes <= int(prop.sharedMemPerBlockOptin),
             "half an SM's shared memory is over the per-CTA limit");
  return bytes;
}

/// Raises `kernel`'s dynamic shared-memory limit to `smem_bytes` and checks that with `threads`
/// threads exactly one CTA fits on an SM.
template <class Kernel>
void require_one_cta_per_sm(Kernel* kernel, int threads, int smem_bytes) {
  UB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  int ctas = 0;
  UB_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas, kernel, threads, smem_bytes));
  UB_REQUIRE(ctas == 1, "the shared-memory request does not give exactly one CTA per SM");
}

/// Thread 0's stamps: where the CTA ran, and its clock64 and %globaltimer spans.
struct CtaStamp {
  unsigned sm;
  unsigned long long cycles;
  unsigned long long ns;
};

/// What a launch's stamps say: on how many distinct SMs its CTAs ran, and the median SM clock
/// (clock64 cycles over %globaltimer ns, MHz) over the CTAs that ran long enough to tell.
struct StampSummary {
  int distinct_sms;
  double clock_mhz;
};

/// Copies `ctas` stamps from the device and summarises them.
inline StampSummary summarize_stamps(const CtaStamp* device_stamps, int ctas) {
  std::vector<CtaStamp> stamps(ctas);
  UB_CHECK(
      cudaMemcpy(stamps.data(), device_stamps, ctas * sizeof(CtaStamp), cudaMemcpyDeviceToHost));
  std::vector<unsigned> sms;
  std::vector<double> mhz;
  for (const CtaStamp& s : stamps) {
    sms.push_back(s.sm);
    if (s.ns > 0) mhz.push_back(1e3 * double(s.cycles) / double(s.ns));
  }
  return {count_distinct(sms), median(mhz)};
}

/// word i := i over `count` words (the streams' buffers: what a read must sum to is known).
__global__ void fill_index(uint32_t* words, size_t count) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    words[i] = uint32_t(i);
  }
}

/// Sum of words first_word .. first_word + count - 1 of a fill_index buffer, mod 2^32.
inline uint32_t expected_index_sum(uint64_t first_word, uint64_t count) {
  const uint64_t pairs = count % 2 == 0 ? (count / 2) * (count - 1) : count * ((count - 1) / 2);
  return uint32_t(count * first_word + pairs);
}

}  // namespace ubench
