#pragma once
/// naive's qk tile (models/cuda/naive_attention.cu's naive_qk_kernel, and with grouped-query
/// heads naive_backward.cu's naive_bwd_qk_kernel): out = scale·A·Bᵀ, one CTA of kQkThreads per
/// (bh, i, j) tile, CTA index (bh·⌈n/BM⌉ + i)·⌈n/BN⌉ + j. Loads the A box (rows i·BM … of head
/// bh, D halves each) and the B box (rows j·BN … of head bh, or with kGrouped of the K/V head
/// bh / group) once, computes the tile with 8 warps laid out 2 × 4, stages it through shared
/// memory and stores it as one box of out ([B·H·n][n]).

#include <cuda_fp16.h>

#include <cstdint>

#include "models/cuda/device_primitives.cuh"

namespace memwall::cuda {

inline constexpr int kQkThreads = 256;  // 8 warps

template <int D, int BM, int BN, bool kGrouped>
__device__ __forceinline__ void qk_tile(const half* __restrict__ a, const half* __restrict__ b,
                                        half* __restrict__ out, int n, float scale, int group) {
  constexpr int kWarpsM = 2;
  constexpr int kWarpsN = 4;
  constexpr int kWarpRows = BM / kWarpsM;
  constexpr int kWarpCols = BN / kWarpsN;
  constexpr int kMt = kWarpRows / 16;
  constexpr int kNt = kWarpCols / 8;
  static_assert(kNt % 2 == 0 && kMt >= 1, "warp tile must be a multiple of 16 × 16");
  static_assert(BM * BN <= (BM + BN) * D, "the out tile is staged in the A/B buffers");

  extern __shared__ uint4 smem_raw[];
  half* sa = reinterpret_cast<half*>(smem_raw);
  half* sb = sa + BM * D;

  const int blocks_m = (n + BM - 1) / BM;
  const int blocks_n = (n + BN - 1) / BN;
  const int cta = static_cast<int>(blockIdx.x);
  const int j = cta % blocks_n;
  const int i = (cta / blocks_n) % blocks_m;
  const long long bh = cta / blocks_n / blocks_m;
  // b's head: with groups the K/V head bh / group (bh < 2^31: a quotient of blockIdx.x).
  const long long b_head = kGrouped ? static_cast<unsigned>(bh) / static_cast<unsigned>(group) : bh;
  const int row0 = i * BM;
  const int col0 = j * BN;
  const int rows = min(BM, n - row0);
  const int cols = min(BN, n - col0);

  load_tile_rows<BM, D, kQkThreads>(sa, a + (bh * n + row0) * D, rows, D);
  load_tile_rows<BN, D, kQkThreads>(sb, b + (b_head * n + col0) * D, cols, D);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int wm = warp / kWarpsN;
  const int wn = warp % kWarpsN;
  float acc[kMt][kNt][4] = {};
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    std::uint32_t af[kMt][4];
#pragma unroll
    for (int mt = 0; mt < kMt; ++mt) {
      load_a_fragment<D>(af[mt], sa, wm * kWarpRows + mt * 16, kk * 16);
    }
#pragma unroll
    for (int np = 0; np < kNt / 2; ++np) {
      std::uint32_t bf[4];
      load_b_fragments_nk<D>(bf, sb, wn * kWarpCols + np * 16, kk * 16);
#pragma unroll
      for (int mt = 0; mt < kMt; ++mt) {
        mma_16816(acc[mt][2 * np], af[mt], bf[0], bf[1]);
        mma_16816(acc[mt][2 * np + 1], af[mt], bf[2], bf[3]);
      }
    }
  }
  __syncthreads();

  half* so = sa;  // the out tile, [BM][BN] swizzled
  const int g = lane / 4;
  const int t = lane % 4;
#pragma unroll
  for (int mt = 0; mt < kMt; ++mt) {
#pragma unroll
    for (int nt = 0; nt < kNt; ++nt) {
      const int r = wm * kWarpRows + mt * 16 + g;
      const int c = wn * kWarpCols + nt * 8 + 2 * t;
      store_half2<BN>(so, r, c, acc[mt][nt][0] * scale, acc[mt][nt][1] * scale);
      store_half2<BN>(so, r + 8, c, acc[mt][nt][2] * scale, acc[mt][nt][3] * scale);
    }
  }
  __syncthreads();
  store_tile_box<BM, BN, kQkThreads>(out + (bh * n + row0) * n + col0, so, rows, cols, n);
}

}  // namespace memwall::cuda
