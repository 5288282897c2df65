/// What a warp's consecutive loads cost: one CTA on one SM, W warps, per thread and step U
/// independent 16-byte loads issued before the first is used, then a use of all of them. Timed by
/// clock64 around the step loop (cycles per step = the step's latency, as each step waits for its
/// loads). The question: does a warp's step take longer with U (the loads of one warp serialise)
/// and for which kind of load and source:
///   path ldg:      ld.global.cg into registers (the loads of hbm_bw.cu);
///   path cp_async: cp.async.cg 16 bytes into shared memory, one commit and wait_group 0 per step
///                  (the loads of models/cuda's mma.sync kernels), then the words read back;
///   source hbm:    each step's addresses fresh (a 2 GiB stream; nothing in the L2 from before);
///   source l2:     a 2 MiB region read once before timing, then over and over (L2 hits).
/// Every launch's word sum is checked against the closed form of the words it read.
///
/// Usage: warp_loads > warp_loads.csv
///   path,source,warps,unroll,bytes_in_flight,steps,cycles_per_step,ns_per_step,gbps,clock_mhz
#include <cstdint>
#include <cstdio>
#include <vector>

#include "ubench_common.cuh"

namespace {

constexpr size_t kStreamBytes = size_t(2) << 30;
constexpr size_t kL2RegionBytes = size_t(2) << 20;  // well inside the L2, power of two
constexpr int kSteps = 2048;
constexpr int kLaunches = 5;

/// One CTA: thread t's u-th load of step s reads vector (base + s·U·T + u·T + t) mod `wrap_vecs`
/// (T threads). Sums every word into *sum; thread 0 stamps its clock64 and %globaltimer spans.
template <int U, bool kCpAsync>
__global__ void __launch_bounds__(1024, 1)
    warp_steps(const uint4* src, unsigned long long wrap_mask, int steps, unsigned* sum,
               ubench::CtaStamp* stamp) {
  extern __shared__ uint4 staged[];  // [U][T] for cp.async
  const unsigned t = threadIdx.x;
  const unsigned T = blockDim.x;
  unsigned acc = 0;
  __syncthreads();
  const long long c0 = clock64();
  const unsigned long long g0 = ubench::global_timer_ns();
#pragma unroll 1
  for (int s = 0; s < steps; ++s) {
    const unsigned long long first = (unsigned long long)s * U * T + t;
    if constexpr (kCpAsync) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&staged[u * T + t]));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst),
                     "l"(src + ((first + u * T) & wrap_mask)));
      }
      asm volatile("cp.async.commit_group;\n" ::);
      asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const uint4 v = staged[u * T + t];  // the thread's own slots: no barrier needed
        acc += v.x + v.y + v.z + v.w;
      }
    } else {
      uint4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) v[u] = __ldcg(src + ((first + u * T) & wrap_mask));
#pragma unroll
      for (int u = 0; u < U; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    }
  }
  const long long c1 = clock64();
  const unsigned long long g1 = ubench::global_timer_ns();
  atomicAdd(sum, acc);
  if (t == 0) *stamp = {ubench::sm_id(), static_cast<unsigned long long>(c1 - c0), g1 - g0};
}

using Kernel = void (*)(const uint4*, unsigned long long, int, unsigned*, ubench::CtaStamp*);

template <bool kCpAsync>
Kernel kernel_for(int unroll) {
  switch (unroll) {
    case 1: return warp_steps<1, kCpAsync>;
    case 2: return warp_steps<2, kCpAsync>;
    case 4: return warp_steps<4, kCpAsync>;
    default: return warp_steps<8, kCpAsync>;
  }
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  UB_CHECK(cudaGetDeviceProperties(&prop, 0));
  uint4* buf = nullptr;
  unsigned* sum = nullptr;
  ubench::CtaStamp* stamp = nullptr;
  UB_CHECK(cudaMalloc(&buf, kStreamBytes));
  UB_CHECK(cudaMalloc(&sum, sizeof(unsigned)));
  UB_CHECK(cudaMalloc(&stamp, sizeof(ubench::CtaStamp)));
  ubench::fill_index<<<4 * prop.multiProcessorCount, 256>>>(reinterpret_cast<uint32_t*>(buf),
                                                            kStreamBytes / 4);
  UB_CHECK_LAUNCH("fill_index");
  UB_CHECK(cudaDeviceSynchronize());
  const size_t smem = size_t(1024) * 8 * sizeof(uint4);  // 128 KiB: the largest [U][T]
  for (bool cp : {false, true}) {
    for (int u : {1, 2, 4, 8}) {
      Kernel k = cp ? kernel_for<true>(u) : kernel_for<false>(u);
      UB_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    }
  }
  std::printf(
      "path,source,warps,unroll,bytes_in_flight,steps,cycles_per_step,ns_per_step,gbps,"
      "clock_mhz\n");
  uint64_t cursor = 0;  // HBM: the next vector of the stream not read yet
  for (const char* source : {"l2", "hbm"}) {
    const bool l2 = source[0] == 'l';
    for (bool cp : {false, true}) {
      for (int warps : {1, 2, 4, 8, 16, 32}) {
        for (int u : {1, 2, 4, 8}) {
          const int threads = 32 * warps;
          const uint64_t step_vecs = uint64_t(threads) * u;
          // HBM: kSteps steps at addresses no launch read in the last 1 GiB (a cursor through the
          // 2 GiB stream); L2: every launch reads the region from vector 0 (launch 0 warms it).
          const int steps = kSteps;
          const uint64_t wrap_vecs = l2 ? kL2RegionBytes / 16 : kStreamBytes / 16;
          Kernel k = cp ? kernel_for<true>(u) : kernel_for<false>(u);
          std::vector<double> cycles, ns;
          for (int launch = 0; launch <= kLaunches; ++launch) {
            const uint64_t vecs = uint64_t(steps) * step_vecs;
            uint64_t base_vec = 0;
            if (!l2) {
              if (cursor + vecs > kStreamBytes / 16) cursor = 0;
              base_vec = cursor;
              cursor += vecs;
            }
            UB_CHECK(cudaMemset(sum, 0, sizeof(unsigned)));
            k<<<1, threads, cp ? smem : 0>>>(buf + base_vec, l2 ? wrap_vecs - 1 : ~0ull, steps, sum,
                                             stamp);
            UB_CHECK_LAUNCH("warp_steps");
            UB_CHECK(cudaDeviceSynchronize());
            unsigned got = 0;
            UB_CHECK(cudaMemcpy(&got, sum, sizeof got, cudaMemcpyDeviceToHost));
            // Words read: vectors 0 .. vecs-1 of the region, wrapping at wrap_vecs (whole passes
            // of the region, then a part).
            const uint64_t passes = l2 ? vecs / wrap_vecs : 0;
            const uint64_t rest = l2 ? vecs % wrap_vecs : vecs;
            const uint32_t expected =
                uint32_t(passes) * ubench::expected_index_sum(0, wrap_vecs * 4) +
                ubench::expected_index_sum(base_vec * 4, rest * 4);
            UB_REQUIRE(got == expected, "the words read are not the words held");
            ubench::CtaStamp st{};
            UB_CHECK(cudaMemcpy(&st, stamp, sizeof st, cudaMemcpyDeviceToHost));
            if (launch > 0) {
              cycles.push_back(double(st.cycles) / steps);
              ns.push_back(double(st.ns) / steps);
            }
          }
          const double c = ubench::median(cycles);
          const double t = ubench::median(ns);
          const double bytes = double(step_vecs) * 16;
          std::printf("%s,%s,%d,%d,%.0f,%d,%.1f,%.2f,%.3f,%.1f\n", cp ? "cp_async" : "ldg", source,
                      warps, u, bytes, steps, c, t, bytes / t, 1e3 * c / t);
          std::fflush(stdout);
        }
      }
    }
  }
  cudaFree(buf);
  cudaFree(sum);
  cudaFree(stamp);
  return 0;
}
