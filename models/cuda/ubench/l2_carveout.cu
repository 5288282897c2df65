/// What a persisting-L2 carve-out costs normal accesses, apart from the capacity it takes: the
/// measurement behind "the carve-out slows every access through the L2" (naive's qk 2.0x and
/// softmax 3.0x slower under the full carve-out with the same DRAM bytes and L2 hit rates;
/// traces/measured/h200-pipe-probe).
///
/// Conditions, in this order (the limit is this context's, and ends with the process):
///   none           cudaLimitPersistingL2CacheSize 0
///   limit R        the limit set to R of the device's maximum, no line ever made persisting
///   persisting R   the same limit, and before every timed launch a hog of the granted size is
///                  read on a stream of its own whose access policy window marks its lines
///                  persisting (hitRatio 1); the measured kernels run on the default stream, with
///                  no window, and wait for the hog read by an event (it is not timed)
///   none again     persisting lines reset (cudaCtxResetPersistingL2Cache), the limit back to 0
/// R is 25%, 50%, 75% and 100% of the maximum, as memwall-cuda's --l2-reserve R% (the driver
/// grants multiples of 1/16 of the L2).
///
/// Tests in each condition (one CTA of 1024 threads per SM on every SM; median of 5 launches
/// after one warm-up, CUDA events):
///   hbm_read, hbm_write, hbm_copy  1 GiB streams from HBM (__ldcg / __stcg, 16-byte vectors),
///                                  windows alternating so no launch finds the last in the L2
///   l2_read, l2_write              every CTA reads (or writes) an 8 MiB buffer 16 times over:
///                                  L2 hits (8 MiB fits the L2 less the whole carve-out)
///   chase_l2, chase_hbm            one thread's dependent loads over a random cycle of 128-byte
///                                  lines, 4 MiB (L2 hits) and 1 GiB (misses), 32768 loads each:
///                                  cycles and ns per load
///
/// Usage: l2_carveout > carveout.csv
///   condition,granted_bytes,test,bytes,ms,gbps,cycles_per_load,ns_per_load
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "ubench_common.cuh"

namespace {

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kGiB = size_t(1) << 30;
constexpr int kThreads = 1024;
constexpr int kTimedLaunches = 5;
constexpr size_t kStreamBytes = kGiB;  // per launch, read + write
constexpr size_t kL2Bytes = 8 * kMiB;  // the L2-resident buffer
constexpr int kL2Passes = 16;
constexpr size_t kLine = 128;
constexpr unsigned kChaseLoads = 32768;

template <int A, int B>
__global__ void __launch_bounds__(kThreads, 1)
    stream(const uint4* src, uint4* dst, unsigned long long steps, unsigned* sum) {
  const unsigned stride = blockDim.x;
  const uint4* r = src + blockIdx.x * steps * A * stride + threadIdx.x;
  uint4* w = dst + blockIdx.x * steps * B * stride + threadIdx.x;
  unsigned acc = 0;
#pragma unroll 1
  for (unsigned long long s = 0; s < steps; ++s) {
    uint4 v[A > 0 ? A : 1];
#pragma unroll
    for (int a = 0; a < A; ++a) v[a] = __ldcg(r + a * stride);
#pragma unroll
    for (int b = 0; b < B; ++b) {
      const unsigned x = unsigned(s) + b;
      __stcg(w + b * stride, make_uint4(x, x + 1, x + 2, x + 3));
    }
#pragma unroll
    for (int a = 0; a < A; ++a) acc += v[a].x + v[a].y + v[a].z + v[a].w;
    r += A * stride;
    w += B * stride;
  }
  if (A > 0 && acc == 0x9e3779b9u) atomicAdd(sum, acc);  // keeps the loads
}

/// Every CTA walks the whole buffer `passes` times, its threads on consecutive vectors, CTAs
/// starting at different offsets so that the slices are loaded evenly.
template <bool kWrite>
__global__ void __launch_bounds__(kThreads, 1)
    l2_loop(uint4* buf, size_t vectors, int passes, unsigned* sum) {
  const size_t start = (size_t(blockIdx.x) * vectors / gridDim.x) & ~size_t(kThreads - 1);
  unsigned acc = 0;
#pragma unroll 1
  for (int p = 0; p < passes; ++p) {
#pragma unroll 4
    for (size_t i = threadIdx.x; i < vectors; i += blockDim.x) {
      size_t j = start + i;
      if (j >= vectors) j -= vectors;
      if constexpr (kWrite) {
        __stcg(buf + j, make_uint4(p, unsigned(i), 0, 0));
      } else {
        const uint4 v = __ldcg(buf + j);
        acc += v.x ^ v.w;
      }
    }
  }
  if (!kWrite && acc == 0x9e3779b9u) atomicAdd(sum, acc);
}

/// One thread follows the cycle from line 0 for `loads` loads, after one untimed lap of `warm`.
__global__ void chase(const unsigned long long* buf, unsigned warm, unsigned loads,
                      unsigned long long* out) {
  unsigned long long i = 0;
  for (unsigned k = 0; k < warm; ++k) i = __ldcg(buf + i);
  const long long c0 = clock64();
  const unsigned long long g0 = ubench::global_timer_ns();
  for (unsigned k = 0; k < loads; ++k) i = __ldcg(buf + i);
  const long long c1 = clock64();
  const unsigned long long g1 = ubench::global_timer_ns();
  out[0] = static_cast<unsigned long long>(c1 - c0);
  out[1] = g1 - g0;
  out[2] = i;
}

/// The hog: read on its own stream, whose window makes its lines persisting.
__global__ void touch(const uint4* hog, size_t vectors, unsigned* sum) {
  unsigned acc = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors;
       i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = hog[i];
    acc += v.x;
  }
  if (acc == 0x9e3779b9u) atomicAdd(sum, acc);
}

/// Links the lines of `bytes` at `buf` into one random cycle (Sattolo), word 0 of each line
/// holding the word index of the next line's word 0.
void link_cycle(unsigned long long* buf, size_t bytes, unsigned seed) {
  const size_t lines = bytes / kLine;
  std::vector<uint32_t> order(lines);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937 rng(seed);
  for (size_t i = lines - 1; i > 0; --i) {
    std::uniform_int_distribution<size_t> pick(0, i - 1);
    std::swap(order[i], order[pick(rng)]);
  }
  // order is a single cycle: line l's successor is order[l].
  std::vector<unsigned long long> host(bytes / sizeof(unsigned long long), 0);
  const size_t words = kLine / sizeof(unsigned long long);
  for (size_t l = 0; l < lines; ++l)
    host[l * words] = static_cast<unsigned long long>(order[l]) * words;
  UB_CHECK(cudaMemcpy(buf, host.data(), bytes, cudaMemcpyHostToDevice));
}

struct Reserve {
  size_t granted = 0;
  void* hog = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t before = nullptr, after = nullptr;
  bool persisting = false;
};

void set_limit(Reserve& r, size_t bytes) {
  UB_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes));
  UB_CHECK(cudaDeviceGetLimit(&r.granted, cudaLimitPersistingL2CacheSize));
}

/// Reads the hog through its window before the next work of the default stream (untimed).
void touch_hog(Reserve& r, unsigned* sum, int sms) {
  if (!r.persisting || r.granted == 0) return;
  UB_CHECK(cudaEventRecord(r.before, nullptr));
  UB_CHECK(cudaStreamWaitEvent(r.stream, r.before, 0));
  touch<<<4 * sms, 256, 0, r.stream>>>(static_cast<const uint4*>(r.hog), r.granted / 16, sum);
  UB_CHECK_LAUNCH("touch");
  UB_CHECK(cudaEventRecord(r.after, r.stream));
  UB_CHECK(cudaStreamWaitEvent(nullptr, r.after, 0));
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  UB_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const int smem = ubench::one_cta_per_sm_smem_bytes(prop);
  const size_t max_reserve = static_cast<size_t>(prop.persistingL2CacheMaxSize);
  UB_REQUIRE(max_reserve > 0, "the device has no persisting L2");

  uint4* big = nullptr;  // reads from [0, 2 GiB), writes to [2 GiB, 4 GiB)
  uint4* l2buf = nullptr;
  unsigned long long* chase_l2 = nullptr;
  unsigned long long* chase_hbm = nullptr;
  unsigned long long* chase_out = nullptr;
  unsigned* sum = nullptr;
  Reserve r;
  UB_CHECK(cudaMalloc(&big, 4 * kGiB));
  UB_CHECK(cudaMalloc(&l2buf, kL2Bytes));
  UB_CHECK(cudaMalloc(&chase_l2, 4 * kMiB));
  UB_CHECK(cudaMalloc(&chase_hbm, kGiB));
  UB_CHECK(cudaMalloc(&chase_out, 3 * sizeof(unsigned long long)));
  UB_CHECK(cudaMalloc(&sum, sizeof(unsigned)));
  UB_CHECK(cudaMalloc(&r.hog, max_reserve));
  UB_CHECK(cudaMemset(r.hog, 0x5A, max_reserve));
  UB_CHECK(cudaMemset(big, 1, 4 * kGiB));
  UB_CHECK(cudaMemset(l2buf, 2, kL2Bytes));
  link_cycle(chase_l2, 4 * kMiB, 1);
  link_cycle(chase_hbm, kGiB, 2);
  UB_CHECK(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
  UB_CHECK(cudaEventCreateWithFlags(&r.before, cudaEventDisableTiming));
  UB_CHECK(cudaEventCreateWithFlags(&r.after, cudaEventDisableTiming));
  ubench::require_one_cta_per_sm(stream<8, 0>, kThreads, smem);
  ubench::require_one_cta_per_sm(stream<0, 8>, kThreads, smem);
  ubench::require_one_cta_per_sm(stream<4, 4>, kThreads, smem);
  ubench::require_one_cta_per_sm(l2_loop<false>, kThreads, smem);
  ubench::require_one_cta_per_sm(l2_loop<true>, kThreads, smem);

  std::printf("condition,granted_bytes,test,bytes,ms,gbps,cycles_per_load,ns_per_load\n");
  ubench::EventTimer timer;

  auto timed = [&](const std::string& cond, const char* test, size_t bytes, auto launch) {
    std::vector<float> ms;
    for (int k = 0; k <= kTimedLaunches; ++k) {
      touch_hog(r, sum, sms);
      timer.start();
      launch(k);
      const float t = timer.stop_ms();
      if (k > 0) ms.push_back(t);
    }
    const double t = ubench::median(ms);
    std::printf("%s,%zu,%s,%zu,%.4f,%.1f,,\n", cond.c_str(), r.granted, test, bytes, t,
                double(bytes) / (t * 1e-3) / 1e9);
    std::fflush(stdout);
  };
  auto streams = [&](const std::string& cond) {
    const uint4* src = big;
    uint4* dst = big + 2 * kGiB / sizeof(uint4);
    const size_t per_step = size_t(8) * sizeof(uint4) * kThreads * sms;
    const unsigned long long steps = kStreamBytes / per_step;
    const size_t moved = steps * per_step;
    auto window = [&](int k) { return (k % 2) * kGiB / sizeof(uint4); };
    timed(cond, "hbm_read", moved, [&](int k) {
      stream<8, 0><<<sms, kThreads, smem>>>(src + window(k), dst, steps, sum);
      UB_CHECK_LAUNCH("stream<8,0>");
    });
    timed(cond, "hbm_write", moved, [&](int k) {
      stream<0, 8><<<sms, kThreads, smem>>>(src, dst + window(k), steps, sum);
      UB_CHECK_LAUNCH("stream<0,8>");
    });
    timed(cond, "hbm_copy", moved, [&](int k) {
      stream<4, 4><<<sms, kThreads, smem>>>(src + window(k), dst + window(k), steps, sum);
      UB_CHECK_LAUNCH("stream<4,4>");
    });
    const size_t vectors = kL2Bytes / sizeof(uint4);
    const size_t l2_moved = size_t(sms) * kL2Passes * kL2Bytes;
    timed(cond, "l2_read", l2_moved, [&](int) {
      l2_loop<false><<<sms, kThreads, smem>>>(l2buf, vectors, kL2Passes, sum);
      UB_CHECK_LAUNCH("l2_loop<read>");
    });
    timed(cond, "l2_write", l2_moved, [&](int) {
      l2_loop<true><<<sms, kThreads, smem>>>(l2buf, vectors, kL2Passes, sum);
      UB_CHECK_LAUNCH("l2_loop<write>");
    });
    for (const auto& [name, buf, lines] :
         {std::tuple{"chase_l2", chase_l2, 4 * kMiB / kLine},
          std::tuple{"chase_hbm", chase_hbm, size_t(kChaseLoads)}}) {
      std::vector<double> cyc, ns;
      for (int k = 0; k < 3; ++k) {
        touch_hog(r, sum, sms);
        // The L2 chase laps its whole cycle first, untimed; the HBM one skips the lines of the
        // launches before it (1 GiB of lines, 32768 visited per launch: misses).
        const unsigned warm =
            std::string(name) == "chase_l2" ? unsigned(lines) : unsigned(k) * kChaseLoads;
        chase<<<1, 1>>>(buf, warm, kChaseLoads, chase_out);
        UB_CHECK_LAUNCH("chase");
        unsigned long long host[3];
        UB_CHECK(cudaMemcpy(host, chase_out, sizeof host, cudaMemcpyDeviceToHost));
        cyc.push_back(double(host[0]) / kChaseLoads);
        ns.push_back(double(host[1]) / kChaseLoads);
      }
      std::printf("%s,%zu,%s,%zu,,,%.1f,%.1f\n", cond.c_str(), r.granted, name,
                  size_t(kChaseLoads) * kLine, ubench::median(cyc), ubench::median(ns));
      std::fflush(stdout);
    }
  };

  set_limit(r, 0);
  streams("none");
  for (const int percent : {25, 50, 75, 100}) {
    const size_t bytes = max_reserve * percent / 100;
    set_limit(r, bytes);
    UB_REQUIRE(r.granted <= size_t(prop.accessPolicyMaxWindowSize), "the hog exceeds a window");
    r.persisting = false;
    streams("limit " + std::to_string(percent) + "%");
    cudaStreamAttrValue set{};
    set.accessPolicyWindow.base_ptr = r.hog;
    set.accessPolicyWindow.num_bytes = r.granted;
    set.accessPolicyWindow.hitRatio = 1.0f;
    set.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    set.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    UB_CHECK(cudaStreamSetAttribute(r.stream, cudaStreamAttributeAccessPolicyWindow, &set));
    r.persisting = true;
    streams("persisting " + std::to_string(percent) + "%");
    UB_CHECK(cudaDeviceSynchronize());
    UB_CHECK(cudaCtxResetPersistingL2Cache());
  }
  r.persisting = false;
  set_limit(r, 0);
  streams("none again");
  UB_CHECK(cudaDeviceSynchronize());
  return 0;
}
