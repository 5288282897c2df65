/// A Hopper-native GEMM: TMA loads into a multi-stage mbarrier ring, wgmma.mma_async m64nNk16
/// fp16 -> fp32, one producer warpgroup and two consumer warpgroups, a persistent grid, and a
/// TMA store of the output tile. Batched, fp16 in and out:
///
///   C[b] (m x n) = alpha . A[b] (m x k) . B[b]^T   with B[b] n x k, row-major ("TN"), or
///   C[b] (m x n) = alpha . A[b] (m x k) . B[b]     with B[b] k x n, row-major ("NN", N-major B)
///
/// all row-major and dense. Naive attention's qk is the TN case (S = Q K^T / sqrt(d)), its pv the
/// NN case (O = P V); the square 8192^3 GEMM is TN.
///
/// The kernel, per CTA (384 threads, one CTA per SM, grid = min(tiles, SMs)):
/// - warpgroup 0, the producer, gives up registers (setmaxnreg 40) and one of its threads walks
///   the CTA's tiles and their K-tiles of 64 elements, waiting for a free stage (empty barrier),
///   then loading the A box (BM x 64) and the B box(es) (BN x 64) into it with
///   cp.async.bulk.tensor, completing on the stage's full barrier;
/// - warpgroups 1 and 2, the consumers (setmaxnreg 232), each own BM/2 rows of the tile: per
///   K-tile they wait for the full barrier, issue 4 k16 steps of wgmma (BM/128 per step), commit,
///   and release the previous stage once wait_group 1 says its wgmmas are done;
/// - the epilogue: each consumer scales its accumulators, converts them to fp16 into its own
///   staging buffer in the 128-byte swizzle the store's tensor map uses (conflict-free), and one
///   thread stores it with cp.async.bulk.tensor; the next tile's mainloop overlaps that store,
///   and the producer is already loading the next tile's stages during the epilogue.
/// Tiles are walked in a grouped order (8 M-tiles per group) so that the CTAs running together
/// share A and B boxes in the L2.
///
/// Shared memory: STAGES x (BM + BN) x 128 bytes of operand boxes (128-byte swizzle, every box
/// 1024-byte aligned), BM x BN x 2 bytes of output staging, and the barriers.
///
/// Usage: wgmma_gemm [--quick | --profile | --profile-small | --phases | --smcount] [--sms N]
///   > gemm.csv (checks on stderr)
///   default: the CPU checks, then every case timed (median of 20 launches after 3 warm-ups) beside
///   cuBLAS (cublasGemmStridedBatchedEx, fp16 in and out, fp32 compute) on the same buffers, its
///   output the reference; --quick: one sequence length, 5 launches; --profile: three cases, each
///   kernel launched once after the checks, for ncu; --profile-small: the same for the naive
///   shapes of B*H 8, N 1024 and 2048 (the sweep's smallest, where the timed launches run at low
///   clocks and CUDA events add the launch), for ncu; --phases: where CTA 0's time goes in the
///   small launches (its stamps: first TMA issued, first stage landed, first tile's wgmmas done,
///   first and last store issued, end; warm and after an L2 scrub; run_phases); --smcount: the SM-count experiment's shapes
///   (8192^3, naive qk and pv at B*H 64, N 4096, d 64 and 128, and B*H 8, N 8192, d 128), 5
///   launches; --sms N: in a green context of N SMs (models/cuda/green_context.h). Column sm_mhz:
///   CTA 0's clock64 over %globaltimer during the last timed launch.
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <memory>

#include "models/cuda/green_context.h"
#include "models/cuda/hopper/hopper_host.cuh"
#include "models/cuda/hopper/hopper_ptx.cuh"
#include "models/cuda/ubench/ubench_common.cuh"

namespace {

using namespace memwall::hopper;

constexpr int kBK = 64;  // K elements per stage: 128 bytes, one swizzle row
constexpr int kRowBytes = kBK * 2;  // bytes per box row
constexpr int kThreads = 384;  // producer + two consumer warpgroups
constexpr int kGroupM = 8;  // M-tiles per group of the tile order

/// How B is laid out: K-major (B is n x k, C = A B^T) or N-major (B is k x n, C = A B).
enum BLayout { kBKMajor = 0, kBNMajor = 1 };

template <int BM, int BN, int STAGES, int BL>
struct Tile {
  static constexpr int kWgRows = BM / 2;  // rows per consumer warpgroup
  static constexpr int kMi = kWgRows / 64;  // wgmma row tiles per consumer
  static constexpr int kABytes = BM * kRowBytes;  // one stage's A box
  static constexpr int kBBytes = BN * kRowBytes;  // one stage's B box(es)
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kCBytes = BM * BN * 2;
  static constexpr int kSmemBytes = 1024 /*alignment slack*/ + STAGES * kStageBytes + kCBytes + 256;
  static_assert(BM == 128 || BM == 256, "BM: 128 or 256");
  static_assert(BN == 64 || BN == 128 || BN == 256, "BN: 64, 128 or 256");
};

/// The tile (batch, m0, n0) of linear index t in the grouped order.
struct TileCoord {
  int b, m0, n0;
};
__device__ __forceinline__ TileCoord tile_coord(int t, int tiles_m, int tiles_n, int bm, int bn) {
  const int per_batch = tiles_m * tiles_n;
  const int b = t / per_batch;
  const int local = t % per_batch;
  const int group = local / (kGroupM * tiles_n);
  const int first_m = group * kGroupM;
  const int group_m = min(kGroupM, tiles_m - first_m);
  const int in_group = local % (kGroupM * tiles_n);
  return {b, (first_m + in_group % group_m) * bm, (in_group / group_m) * bn};
}

/// The shared-memory carve-up of one CTA (1024-byte aligned: the swizzle pattern needs it).
template <int BM, int BN, int STAGES, int BL>
struct Smem {
  using T = Tile<BM, BN, STAGES, BL>;
  unsigned char* a;  // STAGES x kABytes
  unsigned char* b;  // STAGES x kBBytes
  unsigned char* staging;  // kCBytes: consumer cw's rows at cw x kWgRows x BN x 2
  std::uint64_t* full;  // STAGES: the stage's boxes have landed
  std::uint64_t* empty;  // STAGES: both consumers are done with the stage
  __device__ explicit Smem(unsigned char* raw) {
    a = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(raw) + 1023) &
                                         ~std::uintptr_t(1023));
    b = a + STAGES * T::kABytes;
    staging = a + STAGES * T::kStageBytes;
    full = reinterpret_cast<std::uint64_t*>(staging + T::kCBytes);
    empty = full + STAGES;
  }
};

/// The walk over the CTA's tiles (persistent: tiles blockIdx.x, + gridDim.x, ...).
struct Schedule {
  int m, n, k, batch, tiles_m, tiles_n, tiles, k_tiles;
  __device__ Schedule(int m_, int n_, int k_, int batch_, int bm, int bn)
      : m(m_),
        n(n_),
        k(k_),
        batch(batch_),
        tiles_m((m_ + bm - 1) / bm),
        tiles_n((n_ + bn - 1) / bn),
        tiles(tiles_m * tiles_n * batch_),
        k_tiles((k_ + kBK - 1) / kBK) {}
};

/// The probe's words (CTA 0 only, when the launch passes one): the clock this launch ran at, and
/// where a CTA's time goes before and after its tiles' work (--phases). %globaltimer in ns.
enum ProbeWord : int {
  kClockStart = 0,  // clock64, first consumer thread, after the barriers' set-up
  kTimeStart = 1,  // %globaltimer at the same point
  kClockEnd = 2,  // clock64, first consumer thread, after its last store completed
  kTimeEnd = 3,  // %globaltimer at the same point
  kTimeEntry = 4,  // thread 0 on entry, before the barriers' set-up
  kTimeFirstIssue = 5,  // the producer issues its first TMA load
  kTimeFirstFull = 6,  // the first consumer sees the first stage landed
  kTimeFirstMain = 7,  // the first tile's wgmmas are done (first consumer)
  kTimeFirstStore = 8,  // the first tile's TMA store is issued (first consumer)
  kTimeLastStore = 9,  // the last tile's TMA store is issued (first consumer)
  kTiles = 10,  // tiles CTA 0 computed
  kProbeWords = 16
};

/// One thread of the producer warpgroup: fills the stages, in the consumers' order. `probe`: CTA
/// 0's, else null.
template <int BM, int BN, int STAGES, int BL>
__device__ void produce(const CUtensorMap& map_a, const CUtensorMap& map_b,
                        const Smem<BM, BN, STAGES, BL>& sm, const Schedule& sc,
                        unsigned long long* probe) {
  using T = Tile<BM, BN, STAGES, BL>;
  int it = 0;  // K-tiles issued so far, over all of this CTA's tiles
  for (int t = blockIdx.x; t < sc.tiles; t += gridDim.x) {
    const TileCoord c = tile_coord(t, sc.tiles_m, sc.tiles_n, BM, BN);
    for (int kt = 0; kt < sc.k_tiles; ++kt, ++it) {
      const int s = it % STAGES;
      mbarrier_wait(&sm.empty[s], ((it / STAGES) & 1) ^ 1);
      mbarrier_arrive_expect_tx(&sm.full[s], T::kStageBytes);
      if (probe != nullptr && it == 0) probe[kTimeFirstIssue] = ubench::global_timer_ns();
      tma_load_3d(sm.a + s * T::kABytes, &map_a, &sm.full[s], kt * kBK, c.m0, c.b);
      if constexpr (BL == kBKMajor) {
        tma_load_3d(sm.b + s * T::kBBytes, &map_b, &sm.full[s], kt * kBK, c.n0, c.b);
      } else {
#pragma unroll
        for (int j = 0; j < BN / 64; ++j) {  // 64 columns (128 bytes) x 64 k-rows per box
          tma_load_3d(sm.b + s * T::kBBytes + j * 64 * kRowBytes, &map_b, &sm.full[s],
                      c.n0 + 64 * j, kt * kBK, c.b);
        }
      }
    }
  }
}

/// One consumer warpgroup (cw = 0 or 1: rows cw x kWgRows .. of every tile). `probe`: CTA 0's
/// first consumer's, else null; its thread 0 stamps the phases.
template <int BM, int BN, int STAGES, int BL>
__device__ void consume(const CUtensorMap& map_c, const Smem<BM, BN, STAGES, BL>& sm,
                        const Schedule& sc, int cw, float alpha, unsigned long long* probe) {
  using T = Tile<BM, BN, STAGES, BL>;
  const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
  unsigned char* staging = sm.staging + cw * T::kWgRows * BN * 2;
  float acc[T::kMi][BN / 2];
  const bool stamp = probe != nullptr && tid == 0;
  int it = 0;
  int tiles = 0;
  for (int t = blockIdx.x; t < sc.tiles; t += gridDim.x) {
    const TileCoord c = tile_coord(t, sc.tiles_m, sc.tiles_n, BM, BN);
    for (int kt = 0; kt < sc.k_tiles; ++kt, ++it) {
      const int s = it % STAGES;
      mbarrier_wait(&sm.full[s], (it / STAGES) & 1);
      if (stamp && it == 0) probe[kTimeFirstFull] = ubench::global_timer_ns();
      const std::uint32_t a_base = smem_addr(sm.a + s * T::kABytes) + cw * T::kWgRows * kRowBytes;
      const std::uint32_t b_base = smem_addr(sm.b + s * T::kBBytes);
#pragma unroll
      for (int i = 0; i < T::kMi; ++i) pin(acc[i]);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kBK / 16; ++kk) {
        // K-major operands: 16 k-elements are 32 bytes along the swizzled row, 8-row groups
        // 1024 bytes apart. N-major B: 16 k-rows (2048 bytes) per step, 8-row groups 1024 bytes
        // apart, 64-column boxes 64 x 128 bytes apart.
        const std::uint64_t desc_b =
            BL == kBKMajor ? smem_descriptor(b_base + kk * 32, 16, 8 * kRowBytes, Swizzle::k128B)
                           : smem_descriptor(b_base + kk * 16 * kRowBytes, 64 * kRowBytes,
                                             8 * kRowBytes, Swizzle::k128B);
#pragma unroll
        for (int i = 0; i < T::kMi; ++i) {
          const std::uint64_t desc_a = smem_descriptor(a_base + i * 64 * kRowBytes + kk * 32, 16,
                                                       8 * kRowBytes, Swizzle::k128B);
          Wgmma<BN, BL>::mma(acc[i], desc_a, desc_b, kt > 0 || kk > 0);
        }
      }
      wgmma_commit();
      wgmma_wait<1>();
      // The previous K-tile's wgmmas are done: its stage may be refilled.
      if (kt > 0 && tid == 0) mbarrier_arrive(&sm.empty[(it - 1) % STAGES]);
    }
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < T::kMi; ++i) pin(acc[i]);
    if (stamp && tiles == 0) probe[kTimeFirstMain] = ubench::global_timer_ns();
    if (tid == 0) mbarrier_arrive(&sm.empty[(it - 1) % STAGES]);

    // Epilogue. The previous tile's store must have read the staging buffer first.
    if (tid == 0) bulk_wait_read<0>();
    named_barrier_sync(1 + cw, 128);
#pragma unroll
    for (int i = 0; i < T::kMi; ++i) {
#pragma unroll
      for (int r = 0; r < BN / 2; r += 2) {
        const int row = i * 64 + 16 * warp + lane / 4 + 8 * ((r / 2) % 2);
        const int col = 8 * (r / 4) + 2 * (lane % 4);
        // 64-column sub-tile, then the 128-byte swizzle: 16-byte chunk index ^ (row % 8).
        const int chunk = ((col % 64) / 8) ^ (row % 8);
        unsigned char* dst = staging + (col / 64) * T::kWgRows * kRowBytes + row * kRowBytes +
                             chunk * 16 + (col % 8) * 2;
        *reinterpret_cast<__half2*>(dst) =
            __floats2half2_rn(alpha * acc[i][r], alpha * acc[i][r + 1]);
      }
    }
    fence_proxy_async();
    named_barrier_sync(1 + cw, 128);
    if (tid == 0) {
#pragma unroll
      for (int j = 0; j < BN / 64; ++j) {
        tma_store_3d(&map_c, staging + j * T::kWgRows * kRowBytes, c.n0 + 64 * j,
                     c.m0 + cw * T::kWgRows, c.b);
      }
      bulk_commit();
      if (stamp) {
        const unsigned long long now = ubench::global_timer_ns();
        if (tiles == 0) probe[kTimeFirstStore] = now;
        probe[kTimeLastStore] = now;
      }
    }
    ++tiles;
  }
  if (tid == 0) bulk_wait<0>();
  if (stamp) probe[kTiles] = static_cast<unsigned long long>(tiles);
}

template <int BM, int BN, int STAGES, int BL>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b,
                      const __grid_constant__ CUtensorMap map_c, int m, int n, int k, int batch,
                      float alpha, unsigned long long* probe) {
  extern __shared__ unsigned char smem_raw[];
  const Smem<BM, BN, STAGES, BL> sm(smem_raw);
  const Schedule sc(m, n, k, batch, BM, BN);
  const bool cta_probe = probe != nullptr && blockIdx.x == 0;
  if (threadIdx.x == 0) {
    if (cta_probe) probe[kTimeEntry] = ubench::global_timer_ns();
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(&sm.full[s], 1);
      mbarrier_init(&sm.empty[s], 2);  // one arrival per consumer warpgroup
    }
    mbarrier_init_fence();
  }
  __syncthreads();
  // CTA 0's first consumer thread reads the SM clock and the global timer at the start and at
  // the end: the clock this launch ran at.
  const bool probing = cta_probe && threadIdx.x == 128;
  if (probing) {
    probe[kClockStart] = clock64();
    probe[kTimeStart] = ubench::global_timer_ns();
  }
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) produce(map_a, map_b, sm, sc, cta_probe ? probe : nullptr);
  } else {
    setmaxnreg_inc<232>();
    consume(map_c, sm, sc, wg - 1, alpha, cta_probe && wg == 1 ? probe : nullptr);
    if (probing) {
      probe[kClockEnd] = clock64();
      probe[kTimeEnd] = ubench::global_timer_ns();
    }
  }
}

// ---- host -------------------------------------------------------------------------------------

#define CUBLAS_CHECK(call)                                                   \
  do {                                                                       \
    cublasStatus_t st_ = (call);                                             \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                      \
      ::ubench::fail(__FILE__, __LINE__, #call, cublasGetStatusString(st_)); \
    }                                                                        \
  } while (0)

struct Problem {
  int batch, m, n, k;
  BLayout layout;
  float alpha;
};

struct KernelConfig {
  const char* name;
  int bm, bn, stages;
  BLayout layout;
  void (*kernel)(CUtensorMap, CUtensorMap, CUtensorMap, int, int, int, int, float,
                 unsigned long long*);
  int smem;
};

template <int BM, int BN, int STAGES, int BL>
KernelConfig config(const char* name) {
  return {name,
          BM,
          BN,
          STAGES,
          BLayout(BL),
          wgmma_gemm_kernel<BM, BN, STAGES, BL>,
          Tile<BM, BN, STAGES, BL>::kSmemBytes};
}

int g_sms = 0;  // the SMs the persistent grid is sized for (a green context's, with --sms)
unsigned long long* g_probe = nullptr;  // kProbeWords words: the clock and the phases (ProbeWord)
bool g_probe_on = true;  // off under --profile: its 128 bytes of stores show in ncu
cudaStream_t g_stream = nullptr;  // every launch, copy and event (a green context's stream)

/// Launches `cfg` on `p`: a is batch x m x k, b batch x n x k (K-major) or batch x k x n.
void launch(const KernelConfig& cfg, const Problem& p, const __half* a, const __half* b, __half* c,
            cudaStream_t stream) {
  const CUtensorMap ma = make_map(a, p.k, p.m, p.batch, 64, cfg.bm);
  const CUtensorMap mb = p.layout == kBKMajor ? make_map(b, p.k, p.n, p.batch, 64, cfg.bn)
                                              : make_map(b, p.n, p.k, p.batch, 64, 64);
  const CUtensorMap mc = make_map(c, p.n, p.m, p.batch, 64, cfg.bm / 2);
  const long long tiles =
      (long long)((p.m + cfg.bm - 1) / cfg.bm) * ((p.n + cfg.bn - 1) / cfg.bn) * p.batch;
  const int grid = int(std::min<long long>(tiles, g_sms));
  cfg.kernel<<<grid, kThreads, cfg.smem, stream>>>(ma, mb, mc, p.m, p.n, p.k, p.batch, p.alpha,
                                                   g_probe_on ? g_probe : nullptr);
  UB_CHECK_LAUNCH(cfg.name);
}

/// cuBLAS's answer to the same problem (column-major view: C^T = B' A^T).
void launch_cublas(cublasHandle_t h, const Problem& p, const __half* a, const __half* b, __half* c,
                   cudaStream_t stream) {
  CUBLAS_CHECK(cublasSetStream(h, stream));
  const float beta = 0.0f;
  const bool kmajor = p.layout == kBKMajor;
  CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      h, kmajor ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &p.alpha, b, CUDA_R_16F,
      kmajor ? p.k : p.n, (long long)p.n * p.k, a, CUDA_R_16F, p.k, (long long)p.m * p.k, &beta, c,
      CUDA_R_16F, p.n, (long long)p.m * p.n, p.batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

struct Buffers {
  __half *a = nullptr, *b = nullptr, *c = nullptr, *c_ref = nullptr;
  size_t na = 0, nb = 0, nc = 0;
};

Buffers alloc(const Problem& p, unsigned seed) {
  Buffers bf;
  bf.na = size_t(p.batch) * p.m * p.k;
  bf.nb = size_t(p.batch) * p.n * p.k;
  bf.nc = size_t(p.batch) * p.m * p.n;
  UB_CHECK(cudaMalloc(&bf.a, bf.na * 2));
  UB_CHECK(cudaMalloc(&bf.b, bf.nb * 2));
  UB_CHECK(cudaMalloc(&bf.c, bf.nc * 2));
  UB_CHECK(cudaMalloc(&bf.c_ref, bf.nc * 2));
  fill_random<<<1024, 256, 0, g_stream>>>(bf.a, bf.na, seed, 1.0f);
  fill_random<<<1024, 256, 0, g_stream>>>(bf.b, bf.nb, seed * 7 + 1, 1.0f);
  UB_CHECK_LAUNCH("fill_random");
  return bf;
}
void release(Buffers& bf) {
  UB_CHECK(cudaFree(bf.a));
  UB_CHECK(cudaFree(bf.b));
  UB_CHECK(cudaFree(bf.c));
  UB_CHECK(cudaFree(bf.c_ref));
}

/// ||got - ref|| / ||ref|| over fp16 outputs; unwritten (NaN-poisoned) elements count as failure.
double rel_err(const std::vector<__half>& got, const std::vector<double>& ref, int* bad) {
  double e2 = 0, r2 = 0;
  *bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double g = __half2float(got[i]);
    if (!std::isfinite(g)) ++*bad;
    e2 += (g - ref[i]) * (g - ref[i]);
    r2 += ref[i] * ref[i];
  }
  return std::sqrt(e2 / r2);
}

/// Sums (got - ref)^2, ref^2 and the non-finite elements of got over n fp16 values.
__global__ void error_sums(const __half* got, const __half* ref, size_t n, double* sums) {
  double e2 = 0, r2 = 0, bad = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    const double g = __half2float(got[i]), r = __half2float(ref[i]);
    if (!isfinite(g)) bad += 1;
    e2 += (g - r) * (g - r);
    r2 += r * r;
  }
  for (int o = 16; o > 0; o /= 2) {
    e2 += __shfl_down_sync(0xFFFFFFFFu, e2, o);
    r2 += __shfl_down_sync(0xFFFFFFFFu, r2, o);
    bad += __shfl_down_sync(0xFFFFFFFFu, bad, o);
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&sums[0], e2);
    atomicAdd(&sums[1], r2);
    atomicAdd(&sums[2], bad);
  }
}

/// ||got - ref|| / ||ref|| on the device; *bad gets the non-finite (unwritten) elements of got.
double device_rel_err(const __half* got, const __half* ref, size_t n, long long* bad) {
  double* sums = nullptr;
  UB_CHECK(cudaMalloc(&sums, 3 * sizeof(double)));
  UB_CHECK(cudaMemsetAsync(sums, 0, 3 * sizeof(double), g_stream));
  error_sums<<<1024, 256, 0, g_stream>>>(got, ref, n, sums);
  UB_CHECK_LAUNCH("error_sums");
  double h[3];
  UB_CHECK(cudaMemcpyAsync(h, sums, sizeof h, cudaMemcpyDeviceToHost, g_stream));
  UB_CHECK(cudaStreamSynchronize(g_stream));
  UB_CHECK(cudaFree(sums));
  *bad = (long long)h[2];
  return std::sqrt(h[0] / h[1]);
}

/// Small problems with ragged edges against a CPU reference in double.
bool check_cpu(const KernelConfig& cfg, const Problem& p) {
  Buffers bf = alloc(p, 12345u + p.m);
  UB_CHECK(cudaMemsetAsync(bf.c, 0xFF, bf.nc * 2, g_stream));  // NaN poison
  launch(cfg, p, bf.a, bf.b, bf.c, g_stream);
  UB_CHECK(cudaStreamSynchronize(g_stream));
  const auto a = download(bf.a, bf.na, g_stream), b = download(bf.b, bf.nb, g_stream),
             c = download(bf.c, bf.nc, g_stream);
  std::vector<double> ref(bf.nc);
  for (int z = 0; z < p.batch; ++z) {
    for (int i = 0; i < p.m; ++i) {
      for (int j = 0; j < p.n; ++j) {
        double s = 0;
        for (int kk = 0; kk < p.k; ++kk) {
          const double x = __half2float(a[(size_t(z) * p.m + i) * p.k + kk]);
          const double y = p.layout == kBKMajor ? __half2float(b[(size_t(z) * p.n + j) * p.k + kk])
                                                : __half2float(b[(size_t(z) * p.k + kk) * p.n + j]);
          s += x * y;
        }
        ref[(size_t(z) * p.m + i) * p.n + j] = p.alpha * s;
      }
    }
  }
  int bad = 0;
  const double e = rel_err(c, ref, &bad);
  const bool ok = bad == 0 && e < 1e-2;
  std::fprintf(stderr, "check-cpu %s batch=%d m=%d n=%d k=%d: rel_err %.3e, unwritten %d: %s\n",
               cfg.name, p.batch, p.m, p.n, p.k, e, bad, ok ? "pass" : "FAIL");
  release(bf);
  return ok;
}

template <class F>
double median_ms(F&& f, int reps) {
  cudaEvent_t e0, e1;
  UB_CHECK(cudaEventCreate(&e0));
  UB_CHECK(cudaEventCreate(&e1));
  std::vector<float> ms;
  if (reps == 0) {  // profile: one untimed launch
    f();
    UB_CHECK(cudaStreamSynchronize(g_stream));
    return 0.0;
  }
  if (reps > 0) {
    for (int i = 0; i < 3; ++i) f();  // warm-up
  } else {
    reps = 1;  // -1: one timed launch as it comes (after an L2 scrub: --phases)
  }
  for (int i = 0; i < reps; ++i) {
    UB_CHECK(cudaEventRecord(e0, g_stream));
    f();
    UB_CHECK(cudaEventRecord(e1, g_stream));
    UB_CHECK(cudaEventSynchronize(e1));
    float x = 0;
    UB_CHECK(cudaEventElapsedTime(&x, e0, e1));
    ms.push_back(x);
  }
  UB_CHECK(cudaEventDestroy(e0));
  UB_CHECK(cudaEventDestroy(e1));
  return ubench::median(ms);
}

struct Case {
  const char* label;  // what the shape is (gemm, naive-qk, naive-pv)
  Problem p;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(
      stderr,
      "wgmma_gemm: %s\nusage: wgmma_gemm [--quick | --profile | --profile-small | --phases | --smcount] [--sms N]\n",
      why);
  std::exit(2);
}

/// --phases: where CTA 0's time goes in small launches (the probe's stamps, ns after its thread 0
/// entered), warm (the median of 20 back-to-back launches, the stamps of the last) and cold (the
/// L2 scrubbed by reading `scrub` before each of 5 launches, one row each).
void run_phases(const KernelConfig& cfg, const Case& cs, const uint4* scrub, size_t scrub_bytes,
                unsigned* sink) {
  const Problem& p = cs.p;
  Buffers bf = alloc(p, 99u + p.m + p.k);
  const auto row = [&](const char* mode, double ms) {
    unsigned long long h[kProbeWords];
    UB_CHECK(cudaMemcpyAsync(h, g_probe, sizeof h, cudaMemcpyDeviceToHost, g_stream));
    UB_CHECK(cudaStreamSynchronize(g_stream));
    const auto at = [&](int w) { return (long long)h[w] - (long long)h[kTimeEntry]; };
    const double mhz = h[kTimeEnd] > h[kTimeStart] ? double(h[kClockEnd] - h[kClockStart]) /
                                                         double(h[kTimeEnd] - h[kTimeStart]) * 1e3
                                                   : 0.0;
    std::printf("%s,%s,%d,%d,%d,%d,%s,%llu,%.5f,%.0f,%lld,%lld,%lld,%lld,%lld,%lld,%lld\n", mode,
                cs.label, p.batch, p.m, p.n, p.k, cfg.name, h[kTiles], ms, mhz, at(kTimeStart),
                at(kTimeFirstIssue), at(kTimeFirstFull), at(kTimeFirstMain), at(kTimeFirstStore),
                at(kTimeLastStore), at(kTimeEnd));
    std::fflush(stdout);
  };
  UB_CHECK(cudaMemsetAsync(g_probe, 0, kProbeWords * sizeof(unsigned long long), g_stream));
  row("warm", median_ms([&] { launch(cfg, p, bf.a, bf.b, bf.c, g_stream); }, 20));
  for (int r = 0; r < 5; ++r) {
    ubench::scrub_l2<<<4 * g_sms, 512, 0, g_stream>>>(scrub, scrub_bytes / 16, sink);
    UB_CHECK_LAUNCH("scrub_l2");
    row("cold", median_ms([&] { launch(cfg, p, bf.a, bf.b, bf.c, g_stream); }, -1));
  }
  release(bf);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, profile = false, profile_small = false, smcount = false, phases = false;
  int sms = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick")
      quick = true;
    else if (a == "--profile")
      profile = true;
    else if (a == "--profile-small")
      profile = profile_small = true;
    else if (a == "--smcount")
      smcount = true;
    else if (a == "--phases")
      phases = true;
    else if (a == "--sms" && i + 1 < argc)
      sms = std::atoi(argv[++i]);
    else
      usage(("unknown argument " + a).c_str());
  }
  cudaDeviceProp prop{};
  UB_CHECK(cudaGetDeviceProperties(&prop, 0));
  UB_REQUIRE(prop.major == 9 && prop.minor == 0, "wgmma needs a compute capability 9.0 GPU");
  g_sms = prop.multiProcessorCount;
  // --sms N: everything runs in a green context of (at least) N SMs, the persistent grid sized
  // for what it holds.
  const auto green = green_context(sms, g_stream, g_sms);
  UB_CHECK(cudaMalloc(&g_probe, kProbeWords * sizeof(unsigned long long)));
  g_probe_on = !profile;

  const std::vector<KernelConfig> tn = {config<128, 128, 4, kBKMajor>("wgmma_128x128x4_tn"),
                                        config<128, 256, 3, kBKMajor>("wgmma_128x256x3_tn"),
                                        config<256, 128, 3, kBKMajor>("wgmma_256x128x3_tn")};
  const std::vector<KernelConfig> nn = {config<128, 64, 4, kBNMajor>("wgmma_128x64x4_nn"),
                                        config<128, 128, 4, kBNMajor>("wgmma_128x128x4_nn")};
  for (const auto* list : {&tn, &nn}) {
    for (const KernelConfig& cfg : *list) {
      UB_CHECK(
          cudaFuncSetAttribute(cfg.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg.smem));
    }
  }

  bool ok = true;
  for (const KernelConfig& cfg : tn) {
    ok &= check_cpu(cfg, {2, 200, 264, 136, kBKMajor, 0.5f});
    ok &= check_cpu(cfg, {1, 384, 512, 256, kBKMajor, 1.0f});
  }
  for (const KernelConfig& cfg : nn) {
    ok &= check_cpu(cfg, {2, 200, cfg.bn, 200, kBNMajor, 1.0f});
    ok &= check_cpu(cfg, {1, 256, cfg.bn, 512, kBNMajor, 0.25f});
  }

  if (phases) {
    std::vector<Case> pc = {{"gemm", {1, 384, 512, 256, kBKMajor, 1.0f}}};
    for (int d : {64, 128}) {
      for (int sq : {1024, 2048}) {
        pc.push_back({"naive-qk", {8, sq, sq, d, kBKMajor, 1.0f / std::sqrt(float(d))}});
        pc.push_back({"naive-pv", {8, sq, d, sq, kBNMajor, 1.0f}});
      }
    }
    const size_t scrub_bytes = size_t(256) << 20;  // over 4x the L2 of an H100 or H200
    uint4* scrub = nullptr;
    unsigned* sink = nullptr;
    UB_CHECK(cudaMalloc(&scrub, scrub_bytes));
    UB_CHECK(cudaMalloc(&sink, sizeof(unsigned)));
    UB_CHECK(cudaMemset(scrub, 2, scrub_bytes));
    std::printf(
        "mode,shape,batch,m,n,k,kernel,cta0_tiles,ms,sm_mhz,start_ns,first_issue_ns,"
        "first_full_ns,first_main_ns,first_store_ns,last_store_ns,end_ns\n");
    for (const Case& cs : pc) {
      for (const KernelConfig& cfg : cs.p.layout == kBKMajor ? tn : nn) {
        if (cs.p.layout == kBNMajor && cfg.bn != cs.p.n) continue;
        run_phases(cfg, cs, scrub, scrub_bytes, sink);
      }
    }
    UB_CHECK(cudaFree(scrub));
    UB_CHECK(cudaFree(sink));
    UB_CHECK(cudaFree(g_probe));
    std::fprintf(stderr, ok ? "all checks passed\n" : "SOME CHECKS FAILED\n");
    return ok ? 0 : 1;
  }

  std::vector<Case> cases;
  if (!profile_small) cases.push_back({"gemm", {1, 8192, 8192, 8192, kBKMajor, 1.0f}});
  const auto attention = [&](int bh, int s, int d) {
    cases.push_back({"naive-qk", {bh, s, s, d, kBKMajor, 1.0f / std::sqrt(float(d))}});
    cases.push_back({"naive-pv", {bh, s, d, s, kBNMajor, 1.0f}});
  };
  if (smcount) {  // the SM-count experiment's shapes
    for (int d : {64, 128}) attention(64, 4096, d);
    attention(8, 8192, 128);
  } else {
    for (int bh : {8, 64}) {
      for (int d : {64, 128}) {
        for (int sq : {1024, 2048, 4096, 8192, 16384}) {
          if (bh == 64 && sq == 16384) continue;  // the sweep stops at 8192 for B*H = 64
          if (profile_small) {
            if (bh != 8 || sq > 2048) continue;
          } else {
            if ((quick || profile) && sq != 4096) continue;
            if (profile && (bh != 64 || d != 128)) continue;
          }
          attention(bh, sq, d);
        }
      }
    }
  }

  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  std::printf(
      "shape,batch,m,n,k,kernel,sms,ms,tflops,sm_mhz,rel_err_vs_cublas,cublas_ms,"
      "cublas_tflops,ratio\n");
  for (const Case& cs : cases) {
    const Problem& p = cs.p;
    Buffers bf = alloc(p, 99u + p.m + p.k);
    const double flop = 2.0 * p.batch * double(p.m) * p.n * p.k;
    const int reps = profile ? 0 : quick || smcount ? 5 : 20;
    const double cublas_ms =
        median_ms([&] { launch_cublas(handle, p, bf.a, bf.b, bf.c_ref, g_stream); }, reps);
    UB_CHECK(cudaStreamSynchronize(g_stream));
    for (const KernelConfig& cfg : p.layout == kBKMajor ? tn : nn) {
      if (p.layout == kBNMajor && cfg.bn != p.n) continue;
      UB_CHECK(cudaMemsetAsync(bf.c, 0xFF, bf.nc * 2, g_stream));
      launch(cfg, p, bf.a, bf.b, bf.c, g_stream);
      UB_CHECK(cudaStreamSynchronize(g_stream));
      long long bad = 0;
      const double e = device_rel_err(bf.c, bf.c_ref, bf.nc, &bad);
      if (bad != 0 || !(e < 1e-2)) {
        std::fprintf(stderr, "FAIL %s %s: rel_err vs cuBLAS %.3e, unwritten %lld\n", cs.label,
                     cfg.name, e, bad);
        ok = false;
      }
      const double ms = median_ms([&] { launch(cfg, p, bf.a, bf.b, bf.c, g_stream); }, reps);
      const double mhz =
          reps > 0 ? probe_mhz(g_probe, g_stream) : 0.0;  // the last timed launch's clock
      std::printf("%s,%d,%d,%d,%d,%s,%d,%.5f,%.1f,%.0f,%.3e,%.5f,%.1f,%.3f\n", cs.label, p.batch,
                  p.m, p.n, p.k, cfg.name, g_sms, ms, flop / ms * 1e-9, mhz, e, cublas_ms,
                  flop / cublas_ms * 1e-9, cublas_ms / ms);
      std::fflush(stdout);
    }
    release(bf);
  }
  CUBLAS_CHECK(cublasDestroy(handle));
  UB_CHECK(cudaFree(g_probe));
  std::fprintf(stderr, ok ? "all checks passed\n" : "SOME CHECKS FAILED\n");
  return ok ? 0 : 1;
}
