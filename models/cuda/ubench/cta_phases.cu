/// What a short CTA's memory phases cost when only one or two CTAs share an SM: the shape of a
/// naive qk CTA (models/cuda/naive_tiles.cuh, qk_tile) without its products. A CTA of 256 threads
/// (8 warps, as qk) copies `in` bytes into shared memory with 16-byte cp.async (cg), waits for
/// them, spins `spin` cycles (its products' stand-in), then stores `out` bytes from shared memory
/// to a region of its own with 16-byte stores, and exits. The dynamic shared-memory request lets
/// exactly k CTAs onto an SM (checked with the occupancy API); the grid is waves · k · SMs CTAs.
/// The source (64 regions of `in` bytes, CTA b reads region b % 64) is read as qk reads Q and K:
/// every region by many CTAs, so mostly from the L2. Before each timed launch a 256 MiB buffer is
/// read, so that the L2 starts as Nsight Compute's cache control leaves it (write-backs done, the
/// source cold).
///
/// The slope of the launch time against the waves is a slot's time per CTA: the CTA's phases
/// plus whatever the SM takes to retire one CTA and start the next on the slot.
///
/// Usage: cta_phases > cta_phases.csv
///   k,waves,ctas,in_bytes,out_bytes,spin_cycles,ms,load_ns,store_issue_ns,clock_mhz
///   (ms: median of 5 launches, CUDA events; load_ns: median over the CTAs of the last launch of
///   %globaltimer from the CTA's start to its loads' arrival; store_issue_ns: from the spin's end
///   to the last store issued; clock_mhz: median of clock64 / %globaltimer over those CTAs)
#include <cstdint>
#include <cstdio>
#include <vector>

#include "../device_primitives.cuh"
#include "ubench_common.cuh"

namespace {

constexpr int kThreads = 256;
constexpr int kSourceRegions = 64;
constexpr size_t kScrubBytes = size_t(256) << 20;
constexpr int kTimedLaunches = 5;

struct PhaseStamp {
  unsigned sm;
  unsigned long long load_ns;
  unsigned long long store_ns;
  unsigned long long cycles;
  unsigned long long ns;
};

__global__ void __launch_bounds__(kThreads)
    phases(const uint4* __restrict__ src, uint4* __restrict__ dst, int in_vecs, int out_vecs,
           long long spin, PhaseStamp* stamps) {
  extern __shared__ uint4 tile[];
  const unsigned long long g0 = ubench::global_timer_ns();
  const long long c0 = clock64();
  const uint4* from = src + size_t(blockIdx.x % kSourceRegions) * in_vecs;
  for (int i = threadIdx.x; i < in_vecs; i += kThreads) {
    memwall::cuda::cp_async_16(tile + i, from + i);
  }
  memwall::cuda::cp_async_commit();
  memwall::cuda::cp_async_wait<0>();
  __syncthreads();
  const unsigned long long g1 = ubench::global_timer_ns();
  if (spin > 0) {
    const long long s0 = clock64();
    while (clock64() - s0 < spin) {}
  }
  __syncthreads();
  const unsigned long long g2 = ubench::global_timer_ns();
  uint4* to = dst + size_t(blockIdx.x) * out_vecs;
  for (int i = threadIdx.x; i < out_vecs; i += kThreads) {
    to[i] = in_vecs > 0 ? tile[i % in_vecs] : make_uint4(i, blockIdx.x, 0, 0);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned long long g3 = ubench::global_timer_ns();
    stamps[blockIdx.x] = {ubench::sm_id(), g1 - g0, g3 - g2,
                          static_cast<unsigned long long>(clock64() - c0), g3 - g0};
  }
}

/// Dynamic shared memory that lets exactly k CTAs of `phases` onto an SM and holds `in` bytes.
int smem_for(const cudaDeviceProp& prop, int k, int in_bytes) {
  const int bytes = std::max(in_bytes, int(prop.sharedMemPerMultiprocessor / (k + 1)) + 2048);
  UB_CHECK(cudaFuncSetAttribute(phases, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  int ctas = 0;
  UB_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas, phases, kThreads, bytes));
  UB_REQUIRE(ctas == k, "the shared-memory request does not give k CTAs per SM");
  return bytes;
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  UB_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  constexpr int kMaxIn = 64 * 1024, kMaxOut = 32 * 1024, kMaxWaves = 16, kMaxK = 2;
  uint4 *src = nullptr, *dst = nullptr, *scrub_buf = nullptr;
  unsigned* sink = nullptr;
  PhaseStamp* stamps = nullptr;
  const size_t max_ctas = size_t(sms) * kMaxK * kMaxWaves;
  UB_CHECK(cudaMalloc(&src, size_t(kSourceRegions) * kMaxIn));
  UB_CHECK(cudaMalloc(&dst, max_ctas * kMaxOut));
  UB_CHECK(cudaMalloc(&scrub_buf, kScrubBytes));
  UB_CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  UB_CHECK(cudaMalloc(&stamps, max_ctas * sizeof(PhaseStamp)));
  UB_CHECK(cudaMemset(src, 1, size_t(kSourceRegions) * kMaxIn));
  UB_CHECK(cudaMemset(scrub_buf, 2, kScrubBytes));
  std::printf("k,waves,ctas,in_bytes,out_bytes,spin_cycles,ms,load_ns,store_issue_ns,clock_mhz\n");
  struct Case {
    int in, out;
    long long spin;
  };
  // Nothing (a slot's turnaround), each phase alone, qk's d = 64 and d = 128 shapes (Q and K
  // boxes of 128 rows, the 128 × 128 fp16 S box), and those with 2000 cycles of work.
  const Case cases[] = {{0, 0, 0},     {32768, 0, 0},        {65536, 0, 0},
                        {0, 32768, 0}, {32768, 32768, 0},    {65536, 32768, 0},
                        {0, 0, 2000},  {32768, 32768, 2000}, {65536, 32768, 2000}};
  ubench::EventTimer timer;
  for (int k = 1; k <= kMaxK; ++k) {
    for (const Case& c : cases) {
      const int smem = smem_for(prop, k, c.in);
      for (int waves : {1, 2, 4, 8, 16}) {
        const int ctas = sms * k * waves;
        std::vector<double> ms;
        for (int launch = 0; launch <= kTimedLaunches; ++launch) {
          ubench::scrub_l2<<<4 * sms, 512>>>(scrub_buf, kScrubBytes / 16, sink);
          UB_CHECK_LAUNCH("scrub");
          timer.start();
          phases<<<ctas, kThreads, smem>>>(src, dst, c.in / 16, c.out / 16, c.spin, stamps);
          UB_CHECK_LAUNCH("phases");
          const float t = timer.stop_ms();
          if (launch > 0) ms.push_back(t);
        }
        std::vector<PhaseStamp> s(ctas);
        UB_CHECK(cudaMemcpy(s.data(), stamps, ctas * sizeof(PhaseStamp), cudaMemcpyDeviceToHost));
        std::vector<double> load, store, mhz;
        for (const PhaseStamp& x : s) {
          load.push_back(double(x.load_ns));
          store.push_back(double(x.store_ns));
          if (x.ns > 0) mhz.push_back(1e3 * double(x.cycles) / double(x.ns));
        }
        std::printf("%d,%d,%d,%d,%d,%lld,%.5f,%.0f,%.0f,%.1f\n", k, waves, ctas, c.in, c.out,
                    c.spin, ubench::median(ms), ubench::median(load), ubench::median(store),
                    ubench::median(mhz));
        std::fflush(stdout);
      }
    }
  }
  cudaFree(src);
  cudaFree(dst);
  cudaFree(scrub_buf);
  cudaFree(sink);
  cudaFree(stamps);
  return 0;
}
