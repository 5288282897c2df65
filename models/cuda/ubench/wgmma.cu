/// Per-SM throughput of Hopper's warpgroup MMA, wgmma.mma_async m64nNk16 with fp16 A and B from
/// shared memory and fp32 accumulators in registers, against warpgroups per SM (1..4 of 128
/// threads) and N (64, 128, 256); and the dependent latency of one wgmma (one warpgroup, each
/// instruction committed and waited for with wait_group 0 before the next).
/// One CTA per SM (dynamic shared-memory request), one launch over all SMs; the clock64 span of
/// each CTA between two barriers gives its cycles; the median over CTAs, then over 5 launches
/// after a warm-up.
///
/// Operands: A (64 x 16) and B (N x 16) both K-major, no swizzle, in the canonical layout of 8 x 8
/// core matrices (8 rows of 16 contiguous bytes each, 128 bytes per core matrix). Core matrix
/// (row group g, k group j) lies at byte (2 g + j) * 128 of its operand, so the descriptor's
/// leading-dimension byte offset (next core matrix along K) is 128 and its stride-dimension byte
/// offset (next 8-row group along M or N) is 256. Descriptor bits (PTX ISA, "matrix descriptor"):
/// 0-13 start address >> 4, 16-29 leading byte offset >> 4, 32-45 stride byte offset >> 4,
/// 49-51 base offset (0), 62-63 swizzle (0: none).
///
/// Throughput loop, per iteration and warpgroup: wgmma.fence, kUnroll x chains wgmma (chains
/// independent accumulators, each wgmma accumulating into its own), commit_group, then
/// wait_group 1 (one group stays in flight while the next is issued); wait_group 0 after the
/// loop. Chains are 1 and, where the registers allow (chains x N / 2 accumulator registers per
/// thread within 65536 / (128 x warpgroups)), 2; N = 256 with 4 warpgroups does not fit
/// (128 accumulator registers per thread is the whole budget) and is not run.
/// Before timing, one wgmma per N on random fp16 A and B is checked against a CPU reference
/// (double sums of the fp16 values; ||out - ref|| / ||ref|| < 1e-2, every output written).
///
/// Usage: wgmma > wgmma.csv   (check results on stderr)
///   mode,n,warpgroups,chains,wgmma_per_warpgroup,cycles,cycles_per_wgmma,
///   flop_per_cycle_per_sm,kernel_ms,chip_tflops
///   mode: throughput or dependent; cycles_per_wgmma = cycles / wgmma_per_warpgroup (dependent:
///   the latency of one wgmma plus its fence, commit and wait); FLOP per wgmma = 2 x 64 x N x 16.
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "../hopper/hopper_ptx.cuh"
#include "ubench_common.cuh"

namespace {

constexpr int kUnroll = 16;  // wgmma per chain per loop iteration (the loop itself is not unrolled)
constexpr int kTimedLaunches = 5;
constexpr int kWgmmaPerWarpgroup = 4096;  // throughput: wgmma per warpgroup per launch
constexpr int kDependentSteps = 1024;  // dependent: wgmma per launch (one warpgroup)
constexpr int kM = 64, kK = 16;
constexpr int kLeadingBytes = 128;  // next core matrix along K
constexpr int kStrideBytes = 256;  // next 8-row group along M or N
constexpr int kTileABytes = kM * kK * 2;

/// Byte offset of element (row, k) of a K-major, unswizzled operand tile (rows along M or N).
__host__ __device__ constexpr int tile_offset_bytes(int row, int k) {
  return (row / 8) * kStrideBytes + (k / 8) * kLeadingBytes + (row % 8) * 16 + (k % 8) * 2;
}

/// Shared-memory matrix descriptor of an unswizzled K-major operand starting at `smem_addr`.
__device__ __forceinline__ unsigned long long smem_descriptor(unsigned smem_addr) {
  return memwall::hopper::smem_descriptor(smem_addr, kLeadingBytes, kStrideBytes,
                                          memwall::hopper::Swizzle::kNone);
}

using memwall::hopper::fence_proxy_async;
using memwall::hopper::pin;
using memwall::hopper::wgmma_commit;
using memwall::hopper::wgmma_fence;
using memwall::hopper::wgmma_wait;

/// D(64 x N, fp32) = A . B^T (+ D when `accumulate`), A and B from shared memory by descriptor.
template <int N>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], unsigned long long desc_a,
                                         unsigned long long desc_b, int accumulate) {
  memwall::hopper::Wgmma<N, 0>::mma(d, desc_a, desc_b, accumulate);
}

/// Fills A and B (tile_b_bytes) of shared memory with fp16 2^-10 (a wgmma adds 16 x 2^-20 to each
/// accumulator), makes it visible to the tensor cores and returns the two descriptors.
__device__ __forceinline__ void fill_operands(unsigned char* smem, int tile_b_bytes,
                                              unsigned long long& desc_a,
                                              unsigned long long& desc_b) {
  unsigned* words = reinterpret_cast<unsigned*>(smem);
  for (int i = threadIdx.x; i < (kTileABytes + tile_b_bytes) / 4; i += blockDim.x) {
    words[i] = 0x14001400u;
  }
  fence_proxy_async();
  __syncthreads();
  const unsigned base = unsigned(__cvta_generic_to_shared(smem));
  desc_a = smem_descriptor(base);
  desc_b = smem_descriptor(base + kTileABytes);
}

/// Cycles of the CTA's timed loop, measured between two barriers by thread 0.
#define UB_TIMED_LOOP_BEGIN \
  __syncthreads();          \
  const long long t0 = clock64();
#define UB_TIMED_LOOP_END         \
  __syncthreads();                \
  const long long t1 = clock64(); \
  if (threadIdx.x == 0) cycles[blockIdx.x] = static_cast<unsigned long long>(t1 - t0);

/// Throughput: WG warpgroups, each issuing `iters` x kUnroll x CH wgmma over CH accumulators.
template <int N, int CH, int WG>
__global__ void __launch_bounds__(128 * WG, 1)
    wgmma_throughput(int iters, float* out, unsigned long long* cycles) {
  extern __shared__ __align__(128) unsigned char smem[];
  unsigned long long desc_a, desc_b;
  fill_operands(smem, N * kK * 2, desc_a, desc_b);
  float d[CH][N / 2];
#pragma unroll
  for (int k = 0; k < CH; ++k) {
#pragma unroll
    for (int i = 0; i < N / 2; ++i) d[k][i] = 0.0f;
  }
  UB_TIMED_LOOP_BEGIN
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int k = 0; k < CH; ++k) pin(d[k]);
    wgmma_fence();
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int k = 0; k < CH; ++k) wgmma_ss<N>(d[k], desc_a, desc_b, 1);
    }
    wgmma_commit();
    wgmma_wait<1>();
  }
  wgmma_wait<0>();
#pragma unroll
  for (int k = 0; k < CH; ++k) pin(d[k]);
  UB_TIMED_LOOP_END
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < CH; ++k) {
#pragma unroll
    for (int i = 0; i < N / 2; ++i) s += d[k][i];
  }
  if (s == -1.0f) out[0] = s;
}

/// Dependent: one warpgroup; every wgmma is fenced, committed and waited for (wait_group 0).
template <int N>
__global__ void __launch_bounds__(128, 1)
    wgmma_dependent(int iters, float* out, unsigned long long* cycles) {
  extern __shared__ __align__(128) unsigned char smem[];
  unsigned long long desc_a, desc_b;
  fill_operands(smem, N * kK * 2, desc_a, desc_b);
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.0f;
  UB_TIMED_LOOP_BEGIN
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      pin(d);
      wgmma_fence();
      wgmma_ss<N>(d, desc_a, desc_b, 1);
      wgmma_commit();
      wgmma_wait<0>();
      pin(d);
    }
  }
  UB_TIMED_LOOP_END
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) s += d[i];
  if (s == -1.0f) out[0] = s;
}

/// Check: one warpgroup, one wgmma (accumulate 0) on the tiles in `tiles` (A then B, already in
/// the core-matrix layout); D is written row-major (64 x N) to `out`.
template <int N>
__global__ void __launch_bounds__(128, 1) wgmma_check(const uint4* tiles, float* out) {
  extern __shared__ __align__(128) unsigned char smem[];
  uint4* s = reinterpret_cast<uint4*>(smem);
  for (int i = threadIdx.x; i < (kTileABytes + N * kK * 2) / 16; i += blockDim.x) s[i] = tiles[i];
  fence_proxy_async();
  __syncthreads();
  const unsigned base = unsigned(__cvta_generic_to_shared(smem));
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.0f;
  pin(d);
  wgmma_fence();
  wgmma_ss<N>(d, smem_descriptor(base), smem_descriptor(base + kTileABytes), 0);
  wgmma_commit();
  wgmma_wait<0>();
  pin(d);
  // Accumulator fragment: warp w holds rows 16 w .. 16 w + 15; register i of lane l is
  // row 16 w + l / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (l % 4) + i % 2.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    const int row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
    const int col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
    out[row * N + col] = d[i];
  }
}

/// Runs wgmma_check<N> on fresh random fp16 A (64 x 16) and B (16 x N) and compares with the CPU.
template <int N>
void check_against_cpu(std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<__half> a(kM * kK), b(kK * N);  // a[m][k], b[k][n], row-major
  for (auto& x : a) x = __float2half(uniform(rng));
  for (auto& x : b) x = __float2half(uniform(rng));
  const int bytes = kTileABytes + N * kK * 2;
  std::vector<__half> image(bytes / 2);
  for (int m = 0; m < kM; ++m) {
    for (int k = 0; k < kK; ++k) image[tile_offset_bytes(m, k) / 2] = a[m * kK + k];
  }
  for (int n = 0; n < N; ++n) {
    for (int k = 0; k < kK; ++k) image[(kTileABytes + tile_offset_bytes(n, k)) / 2] = b[k * N + n];
  }
  uint4* tiles = nullptr;
  float* out = nullptr;
  UB_CHECK(cudaMalloc(&tiles, bytes));
  UB_CHECK(cudaMalloc(&out, kM * N * sizeof(float)));
  UB_CHECK(cudaMemcpy(tiles, image.data(), bytes, cudaMemcpyHostToDevice));
  UB_CHECK(cudaMemset(out, 0xFF, kM * N * sizeof(float)));  // NaN: an unwritten output fails
  wgmma_check<N><<<1, 128, bytes>>>(tiles, out);
  UB_CHECK_LAUNCH("wgmma_check");
  UB_CHECK(cudaDeviceSynchronize());
  std::vector<float> got(kM * N);
  UB_CHECK(cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double err2 = 0.0, ref2 = 0.0, max_abs = 0.0;
  int bad = 0;
  for (int m = 0; m < kM; ++m) {
    for (int n = 0; n < N; ++n) {
      double ref = 0.0;
      for (int k = 0; k < kK; ++k) {
        ref += double(__half2float(a[m * kK + k])) * double(__half2float(b[k * N + n]));
      }
      const double g = got[m * N + n];
      if (!std::isfinite(g)) ++bad;
      err2 += (g - ref) * (g - ref);
      ref2 += ref * ref;
      max_abs = std::max(max_abs, std::fabs(g - ref));
    }
  }
  const double rel = std::sqrt(err2 / ref2);
  std::fprintf(stderr, "check m64n%dk16: rel_err %.3e, max_abs_err %.3e, non-finite %d of %d\n", N,
               rel, max_abs, bad, kM * N);
  UB_REQUIRE(bad == 0 && rel < 1e-2, "wgmma result differs from the CPU reference");
  UB_CHECK(cudaFree(tiles));
  UB_CHECK(cudaFree(out));
}

using WgmmaKernel = void (*)(int, float*, unsigned long long*);

/// One timed configuration.
struct Config {
  const char* mode;
  int n, warpgroups, chains;
  int wgmma_per_warpgroup;
  int iters;
  WgmmaKernel kernel;
};

template <int N, int CH, int WG>
Config throughput() {
  return {"throughput",
          N,
          WG,
          CH,
          kWgmmaPerWarpgroup,
          kWgmmaPerWarpgroup / (kUnroll * CH),
          wgmma_throughput<N, CH, WG>};
}

template <int N>
Config dependent() {
  return {"dependent", N, 1, 1, kDependentSteps, kDependentSteps / kUnroll, wgmma_dependent<N>};
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  UB_CHECK(cudaGetDeviceProperties(&prop, 0));
  UB_REQUIRE(prop.major == 9 && prop.minor == 0, "wgmma needs a compute capability 9.0 GPU");
  const int num_sms = prop.multiProcessorCount;
  const int smem = ubench::one_cta_per_sm_smem_bytes(prop);
  UB_REQUIRE(smem >= kTileABytes + 256 * kK * 2, "the shared-memory request is too small");

  std::mt19937 rng(20261201);
  for (auto* k : {(void*)wgmma_check<64>, (void*)wgmma_check<128>, (void*)wgmma_check<256>}) {
    UB_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  }
  check_against_cpu<64>(rng);
  check_against_cpu<128>(rng);
  check_against_cpu<256>(rng);

  const std::vector<Config> configs = {
      throughput<64, 1, 1>(),  throughput<64, 1, 2>(),  throughput<64, 1, 3>(),
      throughput<64, 1, 4>(),  throughput<64, 2, 1>(),  throughput<64, 2, 2>(),
      throughput<64, 2, 3>(),  throughput<64, 2, 4>(),  throughput<128, 1, 1>(),
      throughput<128, 1, 2>(), throughput<128, 1, 3>(), throughput<128, 1, 4>(),
      throughput<128, 2, 1>(), throughput<128, 2, 2>(), throughput<128, 2, 3>(),
      throughput<256, 1, 1>(), throughput<256, 1, 2>(), throughput<256, 1, 3>(),
      dependent<64>(),         dependent<128>(),        dependent<256>(),
  };
  float* out = nullptr;
  unsigned long long* cycles = nullptr;
  UB_CHECK(cudaMalloc(&out, sizeof(float)));
  UB_CHECK(cudaMalloc(&cycles, num_sms * sizeof(unsigned long long)));
  std::printf(
      "mode,n,warpgroups,chains,wgmma_per_warpgroup,cycles,cycles_per_wgmma,"
      "flop_per_cycle_per_sm,kernel_ms,chip_tflops\n");
  ubench::EventTimer timer;
  std::vector<unsigned long long> c(num_sms);
  for (const Config& cfg : configs) {
    const int threads = 128 * cfg.warpgroups;
    ubench::require_one_cta_per_sm(cfg.kernel, threads, smem);
    std::vector<double> cyc, ms;
    for (int launch = 0; launch <= kTimedLaunches; ++launch) {
      timer.start();
      cfg.kernel<<<num_sms, threads, smem>>>(cfg.iters, out, cycles);
      UB_CHECK_LAUNCH(cfg.mode);
      const float t = timer.stop_ms();
      UB_CHECK(cudaMemcpy(c.data(), cycles, num_sms * sizeof c[0], cudaMemcpyDeviceToHost));
      if (launch == 0) continue;
      cyc.push_back(ubench::median(c));
      ms.push_back(t);
    }
    const double cycles_median = ubench::median(cyc);
    const double flop_per_wgmma = 2.0 * kM * cfg.n * kK;
    const double flop_per_sm = flop_per_wgmma * cfg.wgmma_per_warpgroup * cfg.warpgroups;
    const double t = ubench::median(ms);
    std::printf("%s,%d,%d,%d,%d,%.0f,%.2f,%.1f,%.4f,%.1f\n", cfg.mode, cfg.n, cfg.warpgroups,
                cfg.chains, cfg.wgmma_per_warpgroup, cycles_median,
                cycles_median / cfg.wgmma_per_warpgroup, flop_per_sm / cycles_median, t,
                flop_per_sm * num_sms / (t * 1e-3) * 1e-12);
    std::fflush(stdout);
  }
  UB_CHECK(cudaFree(out));
  UB_CHECK(cudaFree(cycles));
  return 0;
}
