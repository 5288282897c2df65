/// The board power and the SM clock of the H200 under sustained work of one kind on n SMs: what
/// the power limiter does to the clock. For each mode and SM count, one CTA per SM (dynamic
/// shared-memory request) on the first n SMs the block scheduler picks, launched back to back
/// (each launch about 25 ms) for a warm-up of `--warm` seconds, then for `--measure` seconds in
/// which the board's energy counter (NVML nvmlDeviceGetTotalEnergyConsumption, mJ), the host's
/// wall clock and the work done are read; the SM clock of every measured launch is CTA 0's
/// clock64 span over its %globaltimer span (MHz), the median reported.
///
/// Modes (each thread's operands differ and change every step, so the datapaths toggle as they
/// do on real data; `wgmma-const` repeats one constant tile, as ubench/wgmma.cu does, to show
/// what data costs):
///   idle        no kernel: the board at rest (the clock drops; its power is the floor)
///   sleep       512 threads per CTA in __nanosleep loops: SMs resident, no pipe busy
///   ffma        512 threads, 8 independent fp32 FMA chains each (fp32 pipe)
///   ex2         512 threads, 8 independent MUFU ex2 chains each (SFU; one FMUL beside each)
///   mma         256 threads (8 warps), 4 independent mma.sync m16n8k16 fp16->fp32 chains per
///               warp, A and B alternating between two random register sets
///   wgmma       256 threads (2 warpgroups), wgmma m64n256k16 fp16->fp32 SS, one group in flight,
///               operands cycling through 8 random (A, B) tile pairs in shared memory
///   wgmma-const the same on one constant tile pair (fp16 2^-10)
///   hbm         1024 threads, each 4 independent 16-byte ld.global.cg per step from a 4 GiB
///               buffer, the CTAs' chunks far apart (DRAM read stream)
///   l2          the same from the first 24 MiB of the buffer (an L2-resident read stream)
///   smem        512 threads, each 4 independent 16-byte ld.shared per step over 64 KiB of random
///               words (shared-memory read stream)
///
/// Usage: power [--warm S] [--measure S] [--modes a,b,...] [--sms n,n,...] > power.csv
///   mode,sms,launches,seconds,energy_j,power_w,sm_mhz,nvml_sm_mhz,event_reasons,
///   work,work_per_s,work_per_cycle_per_sm
///   work: FLOP (ffma, mma, wgmma), ops (ex2), bytes (hbm, l2, smem), 0 (idle, sleep); work_per_cycle_per_sm
///   at the measured sm_mhz. event_reasons: NVML's clock event reasons (hex) after the window.
/// NVML is opened with dlopen (libnvidia-ml.so.1, part of the driver). Reads the GPU's state,
/// never changes its clocks or settings.
#include <cuda_fp16.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../hopper/hopper_ptx.cuh"
#include "ubench_common.cuh"

namespace {

// ---- NVML through dlopen ----------------------------------------------------------------------

using NvmlDevice = void*;
struct Nvml {
  int (*init)() = nullptr;
  int (*handle)(unsigned, NvmlDevice*) = nullptr;
  int (*energy)(NvmlDevice, unsigned long long*) = nullptr;
  int (*clock)(NvmlDevice, int, unsigned*) = nullptr;
  int (*reasons)(NvmlDevice, unsigned long long*) = nullptr;
  NvmlDevice device = nullptr;
  bool ok = false;  ///< false: NVML is not there; energies and NVML clocks read 0

  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (lib == nullptr) {
      std::fprintf(stderr, "power: libnvidia-ml.so.1 cannot be opened; no energy readings\n");
      return;
    }
    init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    handle = reinterpret_cast<int (*)(unsigned, NvmlDevice*)>(
        dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    energy = reinterpret_cast<int (*)(NvmlDevice, unsigned long long*)>(
        dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption"));
    clock =
        reinterpret_cast<int (*)(NvmlDevice, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    void* r = dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (r == nullptr) r = dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    reasons = reinterpret_cast<int (*)(NvmlDevice, unsigned long long*)>(r);
    UB_REQUIRE(init && handle && energy && clock && reasons, "an NVML entry point is missing");
    UB_REQUIRE(init() == 0, "nvmlInit_v2 failed");
    UB_REQUIRE(handle(0, &device) == 0, "nvmlDeviceGetHandleByIndex_v2(0) failed");
    ok = true;
  }
  unsigned long long energy_mj() const {
    unsigned long long mj = 0;
    if (!ok) return 0;
    UB_REQUIRE(energy(device, &mj) == 0, "nvmlDeviceGetTotalEnergyConsumption failed");
    return mj;
  }
  unsigned sm_mhz() const {
    unsigned mhz = 0;
    if (!ok) return 0;
    clock(device, 1 /* NVML_CLOCK_SM */, &mhz);
    return mhz;
  }
  unsigned long long event_reasons() const {
    unsigned long long r = 0;
    if (!ok) return 0;
    reasons(device, &r);
    return r;
  }
};

// ---- kernels ------------------------------------------------------------------------------------

constexpr int kChains = 8;

__device__ __forceinline__ unsigned hash32(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

/// A random fp16 pair of magnitudes in [0.5, 1) and random signs.
__host__ __device__ inline unsigned random_half2(unsigned h) {
  const unsigned lo = 0x3800u | (h & 0x03FFu) | ((h >> 10) & 1u) << 15;
  const unsigned hi = 0x3800u | ((h >> 11) & 0x03FFu) | ((h >> 21) & 1u) << 15;
  return lo | hi << 16;
}

/// Thread 0 of CTA 0 stamps the launch's clock64 and %globaltimer spans.
struct Span {
  long long c0;
  unsigned long long t0;
  __device__ void begin() {
    c0 = clock64();
    t0 = ubench::global_timer_ns();
  }
  __device__ void end(unsigned long long* stamp) const {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      stamp[0] = static_cast<unsigned long long>(clock64() - c0);
      stamp[1] = ubench::global_timer_ns() - t0;
    }
  }
};

__global__ void __launch_bounds__(512, 1) sleep_kernel(int iters, unsigned long long* stamp) {
  Span s;
  s.begin();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) __nanosleep(1000);
  s.end(stamp);
}

__global__ void __launch_bounds__(512, 1)
    ffma_kernel(int iters, float* out, unsigned long long* stamp) {
  Span s;
  s.begin();
  const unsigned h = hash32(blockIdx.x * 4096u + threadIdx.x);
  float x[kChains];
  // x <- x * x + c with c near -2: a chaotic orbit in [-2, 2], so the operands keep changing.
  const float c = -1.99f + 1e-5f * float(h & 255u);
#pragma unroll
  for (int k = 0; k < kChains; ++k) x[k] = float(hash32(h + k) & 0xFFFFu) * 3e-5f - 1.0f;
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < 16; ++u) {
#pragma unroll
      for (int k = 0; k < kChains; ++k) x[k] = fmaf(x[k], x[k], c);
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < kChains; ++k) sum += x[k];
  if (sum == -1.0f) out[0] = sum;
  s.end(stamp);
}

__global__ void __launch_bounds__(512, 1)
    ex2_kernel(int iters, float* out, unsigned long long* stamp) {
  Span s;
  s.begin();
  const unsigned h = hash32(blockIdx.x * 4096u + threadIdx.x);
  float x[kChains];
#pragma unroll
  for (int k = 0; k < kChains; ++k) x[k] = float(hash32(h + k) & 0xFFFFu) * 1.5e-5f;
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < 16; ++u) {
#pragma unroll
      for (int k = 0; k < kChains; ++k) {
        // x <- 2^(-8 x): its fixed point (about 0.2) repels, so the argument keeps changing.
        asm volatile("{ .reg .f32 t; mul.f32 t, %0, 0fC1000000; ex2.approx.ftz.f32 %0, t; }"
                     : "+f"(x[k]));
      }
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < kChains; ++k) sum += x[k];
  if (sum == -1.0f) out[0] = sum;
  s.end(stamp);
}

constexpr int kMmaChains = 4;

__global__ void __launch_bounds__(256, 1)
    mma_kernel(int iters, float* out, unsigned long long* stamp) {
  Span s;
  s.begin();
  const unsigned h = hash32(blockIdx.x * 4096u + threadIdx.x);
  unsigned a[2][4], b[2][2];
#pragma unroll
  for (int v = 0; v < 2; ++v) {
#pragma unroll
    for (int j = 0; j < 4; ++j) a[v][j] = random_half2(hash32(h + 16 * v + j));
#pragma unroll
    for (int j = 0; j < 2; ++j) b[v][j] = random_half2(hash32(h + 16 * v + 8 + j));
  }
  float c[kMmaChains][4] = {};
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < 16; ++u) {
      const int v = u % 2;
#pragma unroll
      for (int k = 0; k < kMmaChains; ++k) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};"
            : "+f"(c[k][0]), "+f"(c[k][1]), "+f"(c[k][2]), "+f"(c[k][3])
            : "r"(a[v][0]), "r"(a[v][1]), "r"(a[v][2]), "r"(a[v][3]), "r"(b[v][0]), "r"(b[v][1]));
      }
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < kMmaChains; ++k) sum += c[k][0] + c[k][1] + c[k][2] + c[k][3];
  if (sum == -1.0f) out[0] = sum;
  s.end(stamp);
}

constexpr int kWgmmaN = 256, kWgmmaK = 16;
constexpr int kTileABytes = 64 * kWgmmaK * 2, kTileBBytes = kWgmmaN * kWgmmaK * 2;
constexpr int kPairBytes = kTileABytes + kTileBBytes;
constexpr int kPairs = 8;

/// Two warpgroups, each issuing 16 wgmma m64n256k16 per step into one accumulator, one commit
/// group in flight; the operand pair cycles through `pairs` tile pairs (random, or one constant).
__global__ void __launch_bounds__(256, 1)
    wgmma_kernel(int iters, int random, float* out, unsigned long long* stamp) {
  extern __shared__ __align__(128) unsigned char smem[];
  Span s;
  s.begin();
  unsigned* words = reinterpret_cast<unsigned*>(smem);
  for (int i = threadIdx.x; i < kPairs * kPairBytes / 4; i += blockDim.x) {
    words[i] = random ? random_half2(hash32(blockIdx.x * 1000003u + unsigned(i))) : 0x14001400u;
  }
  memwall::hopper::fence_proxy_async();
  __syncthreads();
  const unsigned base = unsigned(__cvta_generic_to_shared(smem));
  using memwall::hopper::Swizzle;
  float d[kWgmmaN / 2];
#pragma unroll
  for (int i = 0; i < kWgmmaN / 2; ++i) d[i] = 0.0f;
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
    memwall::hopper::pin(d);
    memwall::hopper::wgmma_fence();
#pragma unroll
    for (int u = 0; u < 16; ++u) {
      const unsigned pair = base + unsigned(((it * 16 + u) % kPairs) * kPairBytes);
      memwall::hopper::Wgmma<kWgmmaN, 0>::mma(
          d, memwall::hopper::smem_descriptor(pair, 128, 256, Swizzle::kNone),
          memwall::hopper::smem_descriptor(pair + kTileABytes, 128, 256, Swizzle::kNone), 1);
    }
    memwall::hopper::wgmma_commit();
    memwall::hopper::wgmma_wait<1>();
  }
  memwall::hopper::wgmma_wait<0>();
  memwall::hopper::pin(d);
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < kWgmmaN / 2; ++i) sum += d[i];
  if (sum == -1.0f) out[0] = sum;
  s.end(stamp);
}

constexpr int kHbmThreads = 1024, kHbmLoads = 4;

/// Each CTA reads its own chunk of the buffer (`chunk_vectors` 16-byte vectors, wrapping), `iters`
/// steps of 4 independent loads per thread, ld.global.cg (L1 bypassed).
__global__ void __launch_bounds__(kHbmThreads, 1)
    hbm_kernel(int iters, const uint4* buffer, unsigned long long vectors,
               unsigned long long start_stride, unsigned* out, unsigned long long* stamp) {
  Span s;
  s.begin();
  unsigned long long at = (blockIdx.x * start_stride + threadIdx.x) % vectors;
  unsigned acc = 0;
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
    uint4 v[kHbmLoads];
#pragma unroll
    for (int u = 0; u < kHbmLoads; ++u) {
      unsigned long long j = at + static_cast<unsigned long long>(u) * kHbmThreads;
      if (j >= vectors) j -= vectors;
      v[u] = __ldcg(buffer + j);
    }
#pragma unroll
    for (int u = 0; u < kHbmLoads; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    at += kHbmLoads * kHbmThreads;
    if (at >= vectors) at -= vectors;
  }
  if (acc == 0x12345678u) out[0] = acc;
  s.end(stamp);
}

/// Each thread reads 4 independent 16-byte words of shared memory per step, walking 64 KiB.
__global__ void __launch_bounds__(512, 1)
    smem_kernel(int iters, unsigned* out, unsigned long long* stamp) {
  extern __shared__ __align__(128) unsigned char smem[];
  Span s;
  s.begin();
  constexpr int kVectors = 65536 / 16;
  uint4* v = reinterpret_cast<uint4*>(smem);
  for (int i = threadIdx.x; i < kVectors; i += blockDim.x) {
    const unsigned h = hash32(blockIdx.x * 65536u + unsigned(i));
    v[i] = make_uint4(h, hash32(h), hash32(h + 1), hash32(h + 2));
  }
  __syncthreads();
  unsigned acc = 0;
  int at = threadIdx.x;
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
    uint4 w[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const unsigned addr = unsigned(__cvta_generic_to_shared(&v[(at + u * 512) % kVectors]));
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(w[u].x), "=r"(w[u].y), "=r"(w[u].z), "=r"(w[u].w)
                   : "r"(addr));
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) acc ^= w[u].x ^ w[u].y ^ w[u].z ^ w[u].w;
    at = (at + 4 * 512) % kVectors;
  }
  if (acc == 0x12345678u) out[0] = acc;
  s.end(stamp);
}

// ---- driver -------------------------------------------------------------------------------------

struct Args {
  double warm_s = 0.6;
  double measure_s = 0.8;
  std::vector<std::string> modes{"idle",  "sleep",       "ffma", "ex2", "mma",
                                 "wgmma", "wgmma-const", "hbm",  "l2",  "smem"};
  std::vector<int> sms{132, 99, 66, 33, 16};
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= s.size()) {
    const size_t comma = s.find(',', at);
    out.push_back(s.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--warm")
      a.warm_s = std::stod(value);
    else if (key == "--measure")
      a.measure_s = std::stod(value);
    else if (key == "--modes")
      a.modes = split(value);
    else if (key == "--sms") {
      a.sms.clear();
      for (const auto& v : split(value)) a.sms.push_back(std::stoi(v));
    } else {
      std::fprintf(stderr, "power: unknown option %s\n", key.c_str());
      std::exit(2);
    }
  }
  return a;
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Device {
  cudaDeviceProp prop{};
  float* out = nullptr;
  unsigned long long* stamp = nullptr;
  uint4* buffer = nullptr;
  unsigned long long vectors = 0;
  int smem = 0;
};

/// One launch of `mode` on `sms` CTAs with `iters`; returns the work it did (FLOP, ops, bytes).
double launch(const std::string& mode, int sms, int iters, const Device& dev) {
  if (mode == "sleep") {
    sleep_kernel<<<sms, 512, dev.smem>>>(iters, dev.stamp);
    return 0.0;
  }
  if (mode == "ffma") {
    ffma_kernel<<<sms, 512, dev.smem>>>(iters, dev.out, dev.stamp);
    return 2.0 * 16 * kChains * 512.0 * sms * iters;
  }
  if (mode == "ex2") {
    ex2_kernel<<<sms, 512, dev.smem>>>(iters, dev.out, dev.stamp);
    return 16.0 * kChains * 512.0 * sms * iters;
  }
  if (mode == "mma") {
    mma_kernel<<<sms, 256, dev.smem>>>(iters, dev.out, dev.stamp);
    return 2.0 * 16 * 8 * 16 * 16.0 * kMmaChains * 8 * sms * iters;
  }
  if (mode == "wgmma" || mode == "wgmma-const") {
    wgmma_kernel<<<sms, 256, dev.smem>>>(iters, mode == "wgmma", dev.out, dev.stamp);
    return 2.0 * 64 * kWgmmaN * kWgmmaK * 16.0 * 2 * sms * iters;
  }
  if (mode == "smem") {
    smem_kernel<<<sms, 512, dev.smem>>>(iters, reinterpret_cast<unsigned*>(dev.out), dev.stamp);
    return 16.0 * 4 * 512.0 * sms * iters;
  }
  if (mode == "hbm" || mode == "l2") {
    const unsigned long long vectors = mode == "l2" ? (24ull << 20) / 16 : dev.vectors;
    const unsigned long long stride = vectors / (unsigned long long)dev.prop.multiProcessorCount;
    hbm_kernel<<<sms, kHbmThreads, dev.smem>>>(iters, dev.buffer, vectors, stride,
                                               reinterpret_cast<unsigned*>(dev.out), dev.stamp);
    return 16.0 * kHbmLoads * kHbmThreads * sms * iters;
  }
  std::fprintf(stderr, "power: unknown mode %s\n", mode.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  Nvml nvml;
  Device dev;
  UB_CHECK(cudaGetDeviceProperties(&dev.prop, 0));
  dev.smem = ubench::one_cta_per_sm_smem_bytes(dev.prop);
  UB_REQUIRE(dev.smem >= kPairs * kPairBytes, "the tile pairs do not fit the request");
  ubench::require_one_cta_per_sm(sleep_kernel, 512, dev.smem);
  ubench::require_one_cta_per_sm(ffma_kernel, 512, dev.smem);
  ubench::require_one_cta_per_sm(ex2_kernel, 512, dev.smem);
  ubench::require_one_cta_per_sm(mma_kernel, 256, dev.smem);
  ubench::require_one_cta_per_sm(wgmma_kernel, 256, dev.smem);
  ubench::require_one_cta_per_sm(hbm_kernel, kHbmThreads, dev.smem);
  ubench::require_one_cta_per_sm(smem_kernel, 512, dev.smem);
  const size_t buffer_bytes = size_t(4) << 30;
  dev.vectors = buffer_bytes / 16;
  UB_CHECK(cudaMalloc(&dev.buffer, buffer_bytes));
  UB_CHECK(cudaMemset(dev.buffer, 0x5A, buffer_bytes));
  UB_CHECK(cudaMalloc(&dev.out, 64));
  UB_CHECK(cudaMalloc(&dev.stamp, 16));
  UB_CHECK(cudaDeviceSynchronize());

  std::printf(
      "mode,sms,launches,seconds,energy_j,power_w,sm_mhz,nvml_sm_mhz,event_reasons,"
      "work,work_per_s,work_per_cycle_per_sm\n");
  for (const auto& mode : args.modes) {
    for (int sms : args.sms) {
      if (sms < 1 || sms > dev.prop.multiProcessorCount) continue;
      if (mode == "idle") {
        std::this_thread::sleep_for(std::chrono::duration<double>(args.warm_s));
        const auto e0 = nvml.energy_mj();
        const auto t0 = Clock::now();
        std::this_thread::sleep_for(std::chrono::duration<double>(args.measure_s));
        const double secs = seconds_since(t0);
        const double joules = double(nvml.energy_mj() - e0) * 1e-3;
        std::printf("idle,0,0,%.4f,%.3f,%.2f,0,%u,0x%llx,0,0,0\n", secs, joules, joules / secs,
                    nvml.sm_mhz(), nvml.event_reasons());
        std::fflush(stdout);
        break;
      }
      // Size a launch to about 25 ms.
      int iters = 64;
      for (;;) {
        const auto t = Clock::now();
        launch(mode, sms, iters, dev);
        UB_CHECK_LAUNCH(mode.c_str());
        UB_CHECK(cudaDeviceSynchronize());
        const double s = seconds_since(t);
        if (s > 0.02 || iters >= (1 << 28)) break;
        iters = s < 0.002 ? iters * 8 : int(iters * 0.025 / s);
      }
      const auto warm_start = Clock::now();
      while (seconds_since(warm_start) < args.warm_s) {
        launch(mode, sms, iters, dev);
        UB_CHECK(cudaDeviceSynchronize());
      }
      const auto e0 = nvml.energy_mj();
      const auto t0 = Clock::now();
      double work = 0.0;
      int launches = 0;
      std::vector<double> mhz;
      unsigned long long stamp[2];
      while (seconds_since(t0) < args.measure_s) {
        work += launch(mode, sms, iters, dev);
        UB_CHECK(cudaDeviceSynchronize());
        UB_CHECK(cudaMemcpy(stamp, dev.stamp, sizeof stamp, cudaMemcpyDeviceToHost));
        if (stamp[1] > 0) mhz.push_back(double(stamp[0]) / double(stamp[1]) * 1e3);
        ++launches;
      }
      const double secs = seconds_since(t0);
      const double joules = double(nvml.energy_mj() - e0) * 1e-3;
      const double clock_mhz = ubench::median(mhz);
      const double per_s = work / secs;
      std::printf("%s,%d,%d,%.4f,%.3f,%.2f,%.1f,%u,0x%llx,%.6e,%.6e,%.3f\n", mode.c_str(), sms,
                  launches, secs, joules, joules / secs, clock_mhz, nvml.sm_mhz(),
                  nvml.event_reasons(), work, per_s,
                  clock_mhz > 0 ? per_s / (clock_mhz * 1e6) / sms : 0.0);
      std::fflush(stdout);
    }
  }
  return 0;
}
