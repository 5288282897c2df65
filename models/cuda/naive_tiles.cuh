#pragma once
/// naive attention's qk tile and shared-memory softmax, for its forward kernels
/// (models/cuda/naive_attention.cu) and the grouped or causal forward of its backward
/// (naive_backward.cu).
///
/// qk_tile (naive_qk_kernel; with grouped-query heads naive_bwd_qk_kernel): out = scale·A·Bᵀ,
/// one CTA of kQkThreads per (bh, i, j) tile, CTA index (bh·⌈n/BM⌉ + i)·⌈n/BN⌉ + j. Loads the A
/// box (rows i·BM … of head bh, D halves each) and the B box (rows j·BN … of head bh, or with
/// kGrouped of the K/V head bh / group) once, computes the tile with 8 warps laid out 2 × 4,
/// stages it through shared memory and stores it as one box of out ([B·H·n][n]).

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
  stage_accumulators<BN, kWarpRows, kWarpCols, true>(so, acc, wm, wn, lane, scale);
  __syncthreads();
  store_tile_box<BM, BN, kQkThreads>(out + (bh * n + row0) * n + col0, so, rows, cols, n);
}

/// The softmax kernels' row of this warp: CTA blockIdx.x covers rows_per_cta rows of head bh
/// (bh·⌈n/rows_per_cta⌉ + block), one warp each. Sets `offset` to the row's first element of S
/// (and P) and `row` to its index within the head; false for a warp past the last row.
__device__ __forceinline__ bool softmax_row_offset(int n, int rows_per_cta, long long& offset,
                                                   int& row) {
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int blocks = (n + rows_per_cta - 1) / rows_per_cta;
  const long long bh = blockIdx.x / blocks;
  row = static_cast<int>(blockIdx.x % blocks) * rows_per_cta + warp;
  if (row >= n) return false;
  offset = (bh * n + row) * n;
  return true;
}

/// The same without the row's index (the streaming softmax takes no mask).
__device__ __forceinline__ bool softmax_row_offset(int n, int rows_per_cta, long long& offset) {
  int row = 0;
  return softmax_row_offset(n, rows_per_cta, offset, row);
}

/// naive's softmax (naive_softmax_kernel; with kCausal naive_backward.cu's
/// naive_masked_softmax_kernel, the mask as the model's naive softmax applies it): one CTA per
/// (bh, block of `rows_per_cta` rows), one warp per row. The warp copies its row of S into shared
/// memory once (16-byte cp.async), takes the max and the sum of exponentials from there, and
/// writes the row of P once. With kCausal the keys j ≥ row + 1 (Nq = Nkv: the diagonal) count as
/// −∞ in the max and the sum, and P is 0 there (the row is still loaded and stored whole).
template <bool kCausal>
__device__ __forceinline__ void softmax_rows_in_smem(const half* __restrict__ s,
                                                     half* __restrict__ p, int n,
                                                     int rows_per_cta) {
  extern __shared__ uint4 smem_raw[];
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  long long offset = 0;
  int row = 0;
  if (!softmax_row_offset(n, rows_per_cta, offset, row)) {
    return;
  }
  half* buf = reinterpret_cast<half*>(smem_raw) + static_cast<long long>(warp) * n;
  const int chunks = n / kChunkHalves;
  for (int c = lane; c < chunks; c += 32) {
    cp_async_16(buf + c * kChunkHalves, s + offset + c * kChunkHalves);
  }
  cp_async_commit();
  cp_async_wait<0>();
  __syncwarp();
  // Keys 2e and 2e + 1 of chunk c as floats; with kCausal −∞ where the mask hides them.
  const auto key_pair = [&](const half2* h, int c, int e) {
    float2 f = __half22float2(h[e]);
    if constexpr (kCausal) {
      const int key = c * kChunkHalves + 2 * e;
      f = make_float2(key <= row ? f.x : -INFINITY, key + 1 <= row ? f.y : -INFINITY);
    }
    return f;
  };

  float row_max = -INFINITY;
  for (int c = lane; c < chunks; c += 32) {
    const uint4 v = *reinterpret_cast<const uint4*>(buf + c * kChunkHalves);
    const half2* h = reinterpret_cast<const half2*>(&v);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 f = key_pair(h, c, e);
      row_max = fmaxf(row_max, fmaxf(f.x, f.y));
    }
  }
#pragma unroll
  for (int m = 16; m > 0; m /= 2) {
    row_max = fmaxf(row_max, __shfl_xor_sync(0xffffffffu, row_max, m));
  }
  float row_sum = 0.0f;  // with kCausal key 0 is visible: row_max is finite, exp(−∞ − max) = 0
  for (int c = lane; c < chunks; c += 32) {
    const uint4 v = *reinterpret_cast<const uint4*>(buf + c * kChunkHalves);
    const half2* h = reinterpret_cast<const half2*>(&v);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 f = key_pair(h, c, e);
      row_sum += __expf(f.x - row_max) + __expf(f.y - row_max);
    }
  }
#pragma unroll
  for (int m = 16; m > 0; m /= 2) {
    row_sum += __shfl_xor_sync(0xffffffffu, row_sum, m);
  }
  const float inv_sum = 1.0f / row_sum;
  for (int c = lane; c < chunks; c += 32) {
    const uint4 v = *reinterpret_cast<const uint4*>(buf + c * kChunkHalves);
    const half2* h = reinterpret_cast<const half2*>(&v);
    uint4 out;
    std::uint32_t* o = reinterpret_cast<std::uint32_t*>(&out);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 f = key_pair(h, c, e);
      o[e] = pack_half2(__expf(f.x - row_max) * inv_sum, __expf(f.y - row_max) * inv_sum);
    }
    *reinterpret_cast<uint4*>(p + offset + c * kChunkHalves) = out;
  }
}

}  // namespace memwall::cuda
