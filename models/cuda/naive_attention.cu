#include "models/cuda/naive_attention.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "models/cuda/cuda_check.h"
#include "models/cuda/device_primitives.cuh"
#include "models/cuda/naive_tiles.cuh"
#include "sim/core/error.h"

namespace memwall::cuda {
namespace {

constexpr int kGemmThreads = 256;  // 8 warps per GEMM CTA
/// The opt-in shared memory per block of sm_90 (227 KiB, the H200 preset's sm.smem_per_block):
/// rows of S up to softmax_rows·seq·2 bytes of it are kept in shared memory, longer ones streamed.
constexpr int kMaxSoftmaxSmemBytes = 227 * 1024;
/// The streaming softmax's keys per load: each lane loads kStreamUnroll 16-byte pieces (8 halves)
/// of its row per step, the 32 lanes of the warp 32 · 8 · kStreamUnroll keys.
constexpr int kStreamUnroll = 4;
constexpr int kStreamChunkKeys = 32 * kChunkHalves * kStreamUnroll;

/// qk: one CTA per (bh, i, j) tile of S = scale·Q·Kᵀ (qk_tile, naive_tiles.cuh: the Q box and the K
/// box loaded once, 8 warps 2 × 4, the tile staged through shared memory and stored as one box).
template <int D, int BM, int BN>
__global__ void __launch_bounds__(kGemmThreads)
    naive_qk_kernel(const half* __restrict__ q, const half* __restrict__ k, half* __restrict__ s,
                    int n, float scale) {
  static_assert(kGemmThreads == kQkThreads, "naive_tiles.cuh's tile is laid out for 8 warps");
  qk_tile<D, BM, BN, false>(q, k, s, n, scale, 1);
}

/// softmax: one CTA per (bh, block of `rows_per_cta` rows), one warp per row. The warp copies its
/// row of S into shared memory once (16-byte cp.async), takes the max and the sum of exponentials
/// from there, and writes the row of P once.
__global__ void __launch_bounds__(256)
    naive_softmax_kernel(const half* __restrict__ s, half* __restrict__ p, int n,
                         int rows_per_cta) {
  softmax_rows_in_smem<false>(s, p, n, rows_per_cta);
}

/// Combines two partial softmax statistics (running max m, sum of exp(x − m)) into the first.
/// A partial that has seen nothing is (−∞, 0) and contributes nothing.
__device__ __forceinline__ void combine_max_sum(float& m, float& l, float m2, float l2) {
  const float mx = fmaxf(m, m2);
  if (mx == -INFINITY) return;
  l = (m == -INFINITY ? 0.0f : l * __expf(m - mx)) +
      (m2 == -INFINITY ? 0.0f : l2 * __expf(m2 - mx));
  m = mx;
}

/// The streaming softmax, for rows too long for shared memory: one CTA per (bh, block of
/// `rows_per_cta` rows), one warp per row, no shared memory. The warp reads its row of S twice
/// from global memory in chunks of kStreamChunkKeys keys, the next chunk's loads issued before
/// the current one is used: the first pass keeps an online max and sum of exponentials (each
/// lane over its 8-key pieces, rescaling its sum when its max grows; the lanes are combined by
/// shuffles), the second writes the row of P.
__global__ void __launch_bounds__(256)
    naive_softmax_stream_kernel(const half* __restrict__ s, half* __restrict__ p, int n,
                                int rows_per_cta) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  long long offset = 0;
  if (!softmax_row_offset(n, rows_per_cta, offset)) {
    return;
  }
  const uint4* in = reinterpret_cast<const uint4*>(s + offset);
  uint4* out = reinterpret_cast<uint4*>(p + offset);
  const int pieces = n / kChunkHalves;  // 16-byte pieces of the row
  const auto load_chunk = [&](uint4(&buf)[kStreamUnroll], int first) {
#pragma unroll
    for (int u = 0; u < kStreamUnroll; ++u) {
      const int i = first + u * 32 + lane;
      if (i < pieces) buf[u] = in[i];
    }
  };
  constexpr int kChunkPieces = kStreamChunkKeys / kChunkHalves;
  // One pass over the row: chunk c + 1's loads are issued before chunk c is used, and `use(piece,
  // i)` is called for each of this lane's 16-byte pieces i of the chunk, in order.
  const auto stream_row = [&](auto&& use) {
    uint4 next[kStreamUnroll];
    load_chunk(next, 0);
    for (int first = 0; first < pieces; first += kChunkPieces) {
      uint4 cur[kStreamUnroll];
#pragma unroll
      for (int u = 0; u < kStreamUnroll; ++u) cur[u] = next[u];
      if (first + kChunkPieces < pieces) load_chunk(next, first + kChunkPieces);
#pragma unroll
      for (int u = 0; u < kStreamUnroll; ++u) {
        const int i = first + u * 32 + lane;
        if (i < pieces) use(cur[u], i);
      }
    }
  };

  float row_max = -INFINITY;
  float row_sum = 0.0f;
  stream_row([&](const uint4& piece, int) {
    const half2* h = reinterpret_cast<const half2*>(&piece);
    float2 f[4];
    float piece_max = -INFINITY;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      f[e] = __half22float2(h[e]);
      piece_max = fmaxf(piece_max, fmaxf(f[e].x, f[e].y));
    }
    const float m = fmaxf(row_max, piece_max);
    float sum = row_max == -INFINITY ? 0.0f : row_sum * __expf(row_max - m);
#pragma unroll
    for (int e = 0; e < 4; ++e) sum += __expf(f[e].x - m) + __expf(f[e].y - m);
    row_max = m;
    row_sum = sum;
  });
#pragma unroll
  for (int m = 16; m > 0; m /= 2) {
    const float other_max = __shfl_xor_sync(0xffffffffu, row_max, m);
    const float other_sum = __shfl_xor_sync(0xffffffffu, row_sum, m);
    combine_max_sum(row_max, row_sum, other_max, other_sum);
  }
  const float inv_sum = 1.0f / row_sum;

  stream_row([&](const uint4& piece, int i) {
    const half2* h = reinterpret_cast<const half2*>(&piece);
    uint4 o;
    std::uint32_t* w = reinterpret_cast<std::uint32_t*>(&o);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 f = __half22float2(h[e]);
      w[e] = pack_half2(__expf(f.x - row_max) * inv_sum, __expf(f.y - row_max) * inv_sum);
    }
    out[i] = o;
  });
}

/// pv: one CTA per (bh, i) block of BM rows, CTA index bh·⌈N/BM⌉ + i; 8 warps laid out 4 × 2.
/// For each k chunk c of BK columns it loads the P box (its rows × BK halves, pitch N) and the V
/// box (BK rows × D), two chunks in flight; the O box is stored once at the end.
template <int D, int BM, int BK>
__global__ void __launch_bounds__(kGemmThreads)
    naive_pv_kernel(const half* __restrict__ p, const half* __restrict__ v, half* __restrict__ o,
                    int n) {
  constexpr int kWarpsM = 4;
  constexpr int kWarpsN = 2;
  constexpr int kWarpRows = BM / kWarpsM;
  constexpr int kWarpCols = D / kWarpsN;
  constexpr int kMt = kWarpRows / 16;
  constexpr int kNt = kWarpCols / 8;
  constexpr int kStageHalves = BM * BK + BK * D;
  static_assert(kNt % 2 == 0 && kMt >= 1, "warp tile must be a multiple of 16 × 16");
  static_assert(BM * D <= 2 * kStageHalves, "the O tile is staged in the P/V buffers");

  extern __shared__ uint4 smem_raw[];
  half* smem = reinterpret_cast<half*>(smem_raw);

  const int blocks_m = (n + BM - 1) / BM;
  const long long bh = blockIdx.x / blocks_m;
  const int row0 = static_cast<int>(blockIdx.x % blocks_m) * BM;
  const int rows = min(BM, n - row0);
  const half* pg = p + (bh * n + row0) * n;
  const half* vg = v + bh * n * D;
  const int chunks = (n + BK - 1) / BK;

  auto load_chunk = [&](int c, int stage) {
    const int k0 = c * BK;
    const int kcols = min(BK, n - k0);
    half* sp = smem + stage * kStageHalves;
    load_tile_box<BM, BK, kGemmThreads>(sp, pg + k0, rows, kcols, n);
    load_tile_rows<BK, D, kGemmThreads>(sp + BM * BK, vg + static_cast<long long>(k0) * D, kcols,
                                        D);
  };

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int wm = warp / kWarpsN;
  const int wn = warp % kWarpsN;
  float acc[kMt][kNt][4] = {};

  load_chunk(0, 0);
  cp_async_commit();
  for (int c = 0; c < chunks; ++c) {
    if (c + 1 < chunks) {
      load_chunk(c + 1, (c + 1) & 1);
    }
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    const half* sp = smem + (c & 1) * kStageHalves;
    const half* sv = sp + BM * BK;
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      std::uint32_t a[kMt][4];
#pragma unroll
      for (int mt = 0; mt < kMt; ++mt) {
        load_a_fragment<BK>(a[mt], sp, wm * kWarpRows + mt * 16, kk * 16);
      }
#pragma unroll
      for (int np = 0; np < kNt / 2; ++np) {
        std::uint32_t b[4];
        load_b_fragments_kn<D>(b, sv, kk * 16, wn * kWarpCols + np * 16);
#pragma unroll
        for (int mt = 0; mt < kMt; ++mt) {
          mma_16816(acc[mt][2 * np], a[mt], b[0], b[1]);
          mma_16816(acc[mt][2 * np + 1], a[mt], b[2], b[3]);
        }
      }
    }
    __syncthreads();
  }

  half* so = smem;  // the O tile, [BM][D] swizzled
  stage_accumulators<D, kWarpRows, kWarpCols, false>(so, acc, wm, wn, lane, 1.0f);
  __syncthreads();
  store_tile_box<BM, D, kGemmThreads>(o + (bh * n + row0) * D, so, rows, D, D);
}

/// Launches `kernel` with `smem_bytes` of dynamic shared memory, raising its limit first.
template <typename Kernel, typename... Args>
void launch(Kernel kernel, const char* name, std::int64_t grid, int threads, int smem_bytes,
            cudaStream_t stream, Args... args) {
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes),
             name);
  kernel<<<static_cast<unsigned>(grid), threads, static_cast<std::size_t>(smem_bytes), stream>>>(
      args...);
  check_launch(name);
}

template <int D>
void launch_qk_d(const AttentionShape& shape, const NaiveBlocks& blocks, const half* q,
                 const half* k, half* s, float scale, cudaStream_t stream) {
  const std::int64_t grid = shape.heads_total() * ceil_div(shape.seq, blocks.block_q) *
                            ceil_div(shape.seq, blocks.block_kv);
  if (blocks.block_q == 128) {
    launch(naive_qk_kernel<D, 128, 128>, "naive_qk_kernel", grid, kGemmThreads, (128 + 128) * D * 2,
           stream, q, k, s, shape.seq, scale);
  } else {
    launch(naive_qk_kernel<D, 64, 64>, "naive_qk_kernel", grid, kGemmThreads, (64 + 64) * D * 2,
           stream, q, k, s, shape.seq, scale);
  }
}

template <int D>
void launch_pv_d(const AttentionShape& shape, const NaiveBlocks& blocks, const half* p,
                 const half* v, half* o, cudaStream_t stream) {
  const std::int64_t grid = shape.heads_total() * ceil_div(shape.seq, blocks.block_q);
  if (blocks.block_q == 128) {
    launch(naive_pv_kernel<D, 128, 64>, "naive_pv_kernel", grid, kGemmThreads,
           2 * (128 * 64 + 64 * D) * 2, stream, p, v, o, shape.seq);
  } else {
    launch(naive_pv_kernel<D, 64, 64>, "naive_pv_kernel", grid, kGemmThreads,
           2 * (64 * 64 + 64 * D) * 2, stream, p, v, o, shape.seq);
  }
}

}  // namespace

void check_naive_supported(const AttentionShape& shape, const NaiveBlocks& blocks) {
  auto fail = [](const std::string& why) { throw UsageError("naive attention: " + why); };
  if (shape.head_dim != 64 && shape.head_dim != 128) {
    fail("head_dim must be 64 or 128 (the instantiated kernels), got " +
         std::to_string(shape.head_dim));
  }
  if (!((blocks.block_q == 128 && blocks.block_kv == 128) ||
        (blocks.block_q == 64 && blocks.block_kv == 64))) {
    fail("(block_q, block_kv) must be (128, 128) or (64, 64), got (" +
         std::to_string(blocks.block_q) + ", " + std::to_string(blocks.block_kv) + ")");
  }
  if (blocks.block_k != 64) {
    fail("block_k must be 64, got " + std::to_string(blocks.block_k));
  }
  if (blocks.softmax_rows < 1 || blocks.softmax_rows > 8) {
    fail("softmax_rows must be in 1..8, got " + std::to_string(blocks.softmax_rows));
  }
  if (shape.seq <= 0 || shape.seq % 8 != 0) {
    fail("seq must be a positive multiple of 8 (16-byte rows), got " + std::to_string(shape.seq));
  }
  if (shape.batch <= 0 || shape.heads <= 0) {
    fail("batch and heads must be positive");
  }
}

void launch_naive_qk(const AttentionShape& shape, const NaiveBlocks& blocks, const half* q,
                     const half* k, half* s, float scale, cudaStream_t stream) {
  check_naive_supported(shape, blocks);
  if (shape.head_dim == 64) {
    launch_qk_d<64>(shape, blocks, q, k, s, scale, stream);
  } else {
    launch_qk_d<128>(shape, blocks, q, k, s, scale, stream);
  }
}

bool naive_softmax_in_smem(const AttentionShape& shape, const NaiveBlocks& blocks) {
  return static_cast<std::int64_t>(blocks.softmax_rows) * shape.seq * 2 <= kMaxSoftmaxSmemBytes;
}

void launch_naive_softmax_streamed(const AttentionShape& shape, const NaiveBlocks& blocks,
                                   const half* s, half* p, cudaStream_t stream) {
  check_naive_supported(shape, blocks);
  const std::int64_t grid = shape.heads_total() * ceil_div(shape.seq, blocks.softmax_rows);
  launch(naive_softmax_stream_kernel, "naive_softmax_stream_kernel", grid, 32 * blocks.softmax_rows,
         0, stream, s, p, shape.seq, blocks.softmax_rows);
}

void launch_naive_softmax(const AttentionShape& shape, const NaiveBlocks& blocks, const half* s,
                          half* p, cudaStream_t stream) {
  if (!naive_softmax_in_smem(shape, blocks)) {  // the model's softmax_chunk default: stream
    launch_naive_softmax_streamed(shape, blocks, s, p, stream);
    return;
  }
  check_naive_supported(shape, blocks);
  const std::int64_t grid = shape.heads_total() * ceil_div(shape.seq, blocks.softmax_rows);
  const int smem = blocks.softmax_rows * shape.seq * 2;
  launch(naive_softmax_kernel, "naive_softmax_kernel", grid, 32 * blocks.softmax_rows, smem, stream,
         s, p, shape.seq, blocks.softmax_rows);
}

void launch_naive_pv(const AttentionShape& shape, const NaiveBlocks& blocks, const half* p,
                     const half* v, half* o, cudaStream_t stream) {
  check_naive_supported(shape, blocks);
  if (shape.head_dim == 64) {
    launch_pv_d<64>(shape, blocks, p, v, o, stream);
  } else {
    launch_pv_d<128>(shape, blocks, p, v, o, stream);
  }
}

}  // namespace memwall::cuda
