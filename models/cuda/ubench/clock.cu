/// Sustained SM clock under load, two loads one after the other, ten ~200 ms launches each:
///   ffma: two 1024-thread CTAs per SM of dependent FFMA chains (eight per thread);
///   mma:  one 1024-thread CTA per SM of mma.sync m16n8k16 fp16 -> fp32 (four accumulator
///         chains per warp), the heaviest matrix load these kernels can make without wgmma.
/// Thread 0 of each CTA reads clock64 and %globaltimer at its start and end; their ratio is that
/// SM's clock over the launch.
///
/// Usage: clock > clock.csv
///   load,launch,ctas,threads_per_cta,iters,kernel_ms,clock_mhz_median,clock_mhz_min,
///   clock_mhz_max,tflops (FLOP over the event time of the launch: 2 per FFMA, 4096 per mma)
#include <cstdio>
#include <vector>

#include "ubench_common.cuh"

namespace {

constexpr int kThreads = 1024;
constexpr int kFfmaCtasPerSm = 2;
constexpr int kFfmaChains = 8;
constexpr int kMmaChains = 4;
constexpr int kLaunches = 10;
constexpr double kTargetMs = 200.0;

__global__ void __launch_bounds__(kThreads, kFfmaCtasPerSm)
    ffma_load(int iters, float a, float b, float* out, unsigned long long* cycles,
              unsigned long long* ns) {
  float x[kFfmaChains];
#pragma unroll
  for (int k = 0; k < kFfmaChains; ++k) x[k] = 0.5f + 1e-4f * float(threadIdx.x % 97) + float(k);
  const long long c0 = clock64();
  const unsigned long long g0 = ubench::global_timer_ns();
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < kFfmaChains; ++k) x[k] = fmaf(x[k], a, b);
  }
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < kFfmaChains; ++k) s += x[k];
  const long long c1 = clock64();
  const unsigned long long g1 = ubench::global_timer_ns();
  if (s == -1.0f) out[0] = s;  // never for these inputs; keeps the chains
  if (threadIdx.x == 0) {
    cycles[blockIdx.x] = static_cast<unsigned long long>(c1 - c0);
    ns[blockIdx.x] = g1 - g0;
  }
}

/// `half2` in every A and B register: fp16 2^-10 pairs add 2^-16 per mma to each accumulator.
__global__ void __launch_bounds__(kThreads, 1)
    mma_load(int iters, unsigned half2, float* out, unsigned long long* cycles,
             unsigned long long* ns) {
  float c[kMmaChains][4];
#pragma unroll
  for (int k = 0; k < kMmaChains; ++k) {
#pragma unroll
    for (int j = 0; j < 4; ++j) c[k][j] = 1e-3f * float(k + j);
  }
  const long long c0 = clock64();
  const unsigned long long g0 = ubench::global_timer_ns();
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < kMmaChains; ++k) {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%0,%1,%2,%3};"
          : "+f"(c[k][0]), "+f"(c[k][1]), "+f"(c[k][2]), "+f"(c[k][3])
          : "r"(half2), "r"(half2), "r"(half2), "r"(half2), "r"(half2), "r"(half2));
    }
  }
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < kMmaChains; ++k) s += c[k][0] + c[k][1] + c[k][2] + c[k][3];
  const long long c1 = clock64();
  const unsigned long long g1 = ubench::global_timer_ns();
  if (s == -1.0f) out[0] = s;
  if (threadIdx.x == 0) {
    cycles[blockIdx.x] = static_cast<unsigned long long>(c1 - c0);
    ns[blockIdx.x] = g1 - g0;
  }
}

/// Device buffers of the per-CTA stamps.
struct Stamps {
  explicit Stamps(int ctas) : m_ctas(ctas) {
    UB_CHECK(cudaMalloc(&out, sizeof(float)));
    UB_CHECK(cudaMalloc(&cycles, ctas * sizeof(unsigned long long)));
    UB_CHECK(cudaMalloc(&ns, ctas * sizeof(unsigned long long)));
  }
  ~Stamps() {
    cudaFree(out);
    cudaFree(cycles);
    cudaFree(ns);
  }
  Stamps(const Stamps&) = delete;
  Stamps& operator=(const Stamps&) = delete;

  /// Each CTA's clock over the last launch, in MHz.
  std::vector<double> mhz() const {
    std::vector<unsigned long long> c(m_ctas), t(m_ctas);
    UB_CHECK(cudaMemcpy(c.data(), cycles, m_ctas * sizeof c[0], cudaMemcpyDeviceToHost));
    UB_CHECK(cudaMemcpy(t.data(), ns, m_ctas * sizeof t[0], cudaMemcpyDeviceToHost));
    std::vector<double> r(m_ctas);
    for (int i = 0; i < m_ctas; ++i) {
      UB_REQUIRE(t[i] > 0, "a CTA saw no time pass");
      r[i] = 1e3 * double(c[i]) / double(t[i]);
    }
    return r;
  }

  float* out = nullptr;
  unsigned long long* cycles = nullptr;
  unsigned long long* ns = nullptr;

 private:
  int m_ctas;
};

/// Sizes `launch(iters)` to about kTargetMs after a warm-up, then prints kLaunches rows.
template <class Launch>
void sustain(const char* load, int ctas, double flop_per_iter, const Stamps& stamps,
             Launch launch) {
  ubench::EventTimer timer;
  int iters = 1 << 14;
  for (int i = 0; i < 2; ++i) {
    timer.start();
    launch(iters);
    const float ms = timer.stop_ms();
    if (i == 1) iters = int(double(iters) * kTargetMs / double(ms));
  }
  for (int l = 0; l < kLaunches; ++l) {
    timer.start();
    launch(iters);
    const float ms = timer.stop_ms();
    const std::vector<double> mhz = stamps.mhz();
    const auto [lo, hi] = std::minmax_element(mhz.begin(), mhz.end());
    std::printf("%s,%d,%d,%d,%d,%.3f,%.1f,%.1f,%.1f,%.2f\n", load, l, ctas, kThreads, iters, ms,
                ubench::median(mhz), *lo, *hi, flop_per_iter * iters / (double(ms) * 1e-3) / 1e12);
    std::fflush(stdout);
  }
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  UB_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int num_sms = prop.multiProcessorCount;
  int per_sm = 0;
  UB_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ffma_load, kThreads, 0));
  UB_REQUIRE(per_sm == kFfmaCtasPerSm, "two 1024-thread FFMA CTAs do not fit on one SM");
  UB_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, mma_load, kThreads, 0));
  UB_REQUIRE(per_sm == 1, "not exactly one 1024-thread mma CTA per SM");
  std::printf(
      "load,launch,ctas,threads_per_cta,iters,kernel_ms,clock_mhz_median,clock_mhz_min,"
      "clock_mhz_max,tflops\n");

  const int ffma_ctas = kFfmaCtasPerSm * num_sms;
  const Stamps ffma_stamps(ffma_ctas);
  const float a = 0.9999f, b = 1e-4f;  // x -> 1: no overflow, no denormals
  sustain("ffma", ffma_ctas, 2.0 * kFfmaChains * kThreads * ffma_ctas, ffma_stamps, [&](int iters) {
    ffma_load<<<ffma_ctas, kThreads>>>(iters, a, b, ffma_stamps.out, ffma_stamps.cycles,
                                       ffma_stamps.ns);
    UB_CHECK_LAUNCH("ffma_load");
  });

  const Stamps mma_stamps(num_sms);
  const double warps = double(kThreads / 32) * num_sms;
  sustain("mma", num_sms, 4096.0 * kMmaChains * warps, mma_stamps, [&](int iters) {
    mma_load<<<num_sms, kThreads>>>(iters, 0x14001400u, mma_stamps.out, mma_stamps.cycles,
                                    mma_stamps.ns);
    UB_CHECK_LAUNCH("mma_load");
  });
  return 0;
}
