#include "models/cuda/naive_backward.h"

#include <cstdint>
#include <string>

#include "models/cuda/cuda_check.h"
#include "models/cuda/device_primitives.cuh"
#include "models/cuda/naive_attention.h"
#include "models/cuda/naive_tiles.cuh"
#include "sim/core/error.h"

namespace memwall::cuda {
namespace {

constexpr int kGemmThreads = 256;  // 8 warps per product CTA, as naive's qk and pv
constexpr int kSumThreads = 128;  // 4 warps per summing CTA (the model's kSumThreads)
constexpr int kMaxSmemBytes = 227 * 1024;  // sm_90's opt-in shared memory per block

/// dv, dk (kTransA) and dq: out = scale·A·B for the BM output rows of block i of head bh, over
/// the reduced dimension in chunks of BK, two chunks in flight (cp.async), 8 warps 4 × 2 over
/// the BM × D output, staged through shared memory and stored once. kTransA: A = aᵀ, the chunk
/// the box of a's rows k0 … (queries) and columns i·BM … (keys), loaded as a [BK][BM] tile and
/// read transposed by ldmatrix (dv: a = P, b = dO; dk: a = dS, b = Q); else A = the box of a's
/// rows i·BM … and columns k0 … (dq: a = dS, b = K). b's chunk is its rows k0 … (BK × D) of head
/// bh, or with kGroupedB (dq with grouped-query heads) of the K/V head bh / group. out's rows are
/// those of head bh (with groups dv and dk write dV_expanded and dK_expanded, per query head).
template <int D, int BM, int BK, bool kTransA, bool kGroupedB = false>
__global__ void __launch_bounds__(kGemmThreads)
    naive_bwd_product_kernel(const half* __restrict__ a, const half* __restrict__ b,
                             half* __restrict__ out, int n, float scale, int group) {
  constexpr int kWarpsM = 4;
  constexpr int kWarpsN = 2;
  constexpr int kWarpRows = BM / kWarpsM;
  constexpr int kWarpCols = D / kWarpsN;
  constexpr int kMt = kWarpRows / 16;
  constexpr int kNt = kWarpCols / 8;
  constexpr int kStageHalves = BM * BK + BK * D;
  static_assert(kNt % 2 == 0 && kMt >= 1, "warp tile must be a multiple of 16 × 16");
  static_assert(BM * D <= 2 * kStageHalves, "the output tile is staged in the chunk buffers");
  static_assert(!(kTransA && kGroupedB), "dv's and dk's b (dO, Q) has the query heads' rows");

  extern __shared__ uint4 smem_raw[];
  half* smem = reinterpret_cast<half*>(smem_raw);

  const int blocks_m = (n + BM - 1) / BM;
  const long long bh = blockIdx.x / blocks_m;
  const int row0 = static_cast<int>(blockIdx.x % blocks_m) * BM;
  const int rows = min(BM, n - row0);
  const int chunks = (n + BK - 1) / BK;
  // b's head: the K/V head bh / group for grouped dq (bh < 2^32: a blockIdx.x quotient).
  const long long b_head =
      kGroupedB ? static_cast<unsigned>(bh) / static_cast<unsigned>(group) : bh;

  auto load_chunk = [&](int c, int stage) {
    const int k0 = c * BK;
    const int kcols = min(BK, n - k0);
    half* sa = smem + stage * kStageHalves;
    if constexpr (kTransA) {
      load_tile_box<BK, BM, kGemmThreads>(sa, a + (bh * n + k0) * n + row0, kcols, rows, n);
    } else {
      load_tile_box<BM, BK, kGemmThreads>(sa, a + (bh * n + row0) * n + k0, rows, kcols, n);
    }
    load_tile_rows<BK, D, kGemmThreads>(sa + BM * BK, b + (b_head * n + k0) * D, kcols, D);
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
    const half* sa = smem + (c & 1) * kStageHalves;
    const half* sb = sa + BM * BK;
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      std::uint32_t af[kMt][4];
#pragma unroll
      for (int mt = 0; mt < kMt; ++mt) {
        if constexpr (kTransA) {
          load_a_fragment_trans<BM>(af[mt], sa, wm * kWarpRows + mt * 16, kk * 16);
        } else {
          load_a_fragment<BK>(af[mt], sa, wm * kWarpRows + mt * 16, kk * 16);
        }
      }
#pragma unroll
      for (int np = 0; np < kNt / 2; ++np) {
        std::uint32_t bf[4];
        load_b_fragments_kn<D>(bf, sb, kk * 16, wn * kWarpCols + np * 16);
#pragma unroll
        for (int mt = 0; mt < kMt; ++mt) {
          mma_16816(acc[mt][2 * np], af[mt], bf[0], bf[1]);
          mma_16816(acc[mt][2 * np + 1], af[mt], bf[2], bf[3]);
        }
      }
    }
    __syncthreads();
  }

  half* so = smem;  // the output tile, [BM][D] swizzled
  stage_accumulators<D, kWarpRows, kWarpCols, true>(so, acc, wm, wn, lane, scale);
  __syncthreads();
  store_tile_box<BM, D, kGemmThreads>(out + (bh * n + row0) * D, so, rows, D, D);
}

/// naive_bwd_qk: naive's qk kernel (models/cuda/naive_attention.cu) for grouped-query heads:
/// out = scale·A·Bᵀ, one CTA per (bh, i, j) tile, CTA index (bh·⌈N/BM⌉ + i)·⌈N/BN⌉ + j. Loads the
/// A box (rows i·BM … of head bh, D halves each) and the B box (rows j·BN … of the K/V head
/// bh / group) once, computes the tile with 8 warps laid out 2 × 4, stages it through shared
/// memory and stores it as one box of out. dp with groups (a = dO, b = V, scale 1), and the
/// forward's S with groups (a = Q, b = K), which it writes whole, as naive's qk does.
template <int D, int BM, int BN>
__global__ void __launch_bounds__(kGemmThreads)
    naive_bwd_qk_kernel(const half* __restrict__ a, const half* __restrict__ b,
                        half* __restrict__ out, int n, float scale, int group) {
  static_assert(kGemmThreads == kQkThreads, "naive_tiles.cuh's tile is laid out for 8 warps");
  qk_tile<D, BM, BN, true>(a, b, out, n, scale, group);
}

/// softmax_bwd: CTA bh·⌈N/rows_per_cta⌉ + m, one warp per row. The warp copies its rows of P and
/// dP into shared memory (16-byte cp.async), takes rowsum(P∘dP) from there, and writes
/// dS = P∘(dP − rowsum) with 16-byte stores.
__global__ void __launch_bounds__(256)
    naive_softmax_bwd_kernel(const half* __restrict__ p, const half* __restrict__ dp,
                             half* __restrict__ ds, int n, int rows_per_cta) {
  extern __shared__ uint4 smem_raw[];
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int blocks = (n + rows_per_cta - 1) / rows_per_cta;
  const long long bh = blockIdx.x / blocks;
  const int row = static_cast<int>(blockIdx.x % blocks) * rows_per_cta + warp;
  if (row >= n) return;
  const long long offset = (bh * n + row) * n;
  const int pieces = n / kChunkHalves;
  uint4* sp = smem_raw + static_cast<long long>(warp) * 2 * pieces;
  uint4* sdp = sp + pieces;
  for (int c = lane; c < pieces; c += 32) {
    cp_async_16(sp + c, p + offset + c * kChunkHalves);
    cp_async_16(sdp + c, dp + offset + c * kChunkHalves);
  }
  cp_async_commit();
  cp_async_wait<0>();
  __syncwarp();
  float sum = 0.0f;
  for (int c = lane; c < pieces; c += 32) {
    const half2* x = reinterpret_cast<const half2*>(sp + c);
    const half2* y = reinterpret_cast<const half2*>(sdp + c);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 fx = __half22float2(x[i]);
      const float2 fy = __half22float2(y[i]);
      sum += fx.x * fy.x + fx.y * fy.y;
    }
  }
#pragma unroll
  for (int m = 16; m > 0; m /= 2) sum += __shfl_xor_sync(~0u, sum, m);
  for (int c = lane; c < pieces; c += 32) {
    const half2* x = reinterpret_cast<const half2*>(sp + c);
    const half2* y = reinterpret_cast<const half2*>(sdp + c);
    uint4 outv;
    std::uint32_t* o = reinterpret_cast<std::uint32_t*>(&outv);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 fx = __half22float2(x[i]);
      const float2 fy = __half22float2(y[i]);
      o[i] = pack_half2(fx.x * (fy.x - sum), fx.y * (fy.y - sum));
    }
    *reinterpret_cast<uint4*>(ds + offset + c * kChunkHalves) = outv;
  }
}

/// The forward's softmax with the causal mask, for the backward's P (not one of its launches):
/// naive's softmax kernel (models/cuda/naive_attention.cu) with the mask applied in it, as the
/// model's naive softmax does (models/naive.cc): S was written whole, the row is loaded whole,
/// the keys j ≥ visible = row + 1 (Nq = Nkv: the bottom-right mask is the diagonal) count as
/// −∞ in the max and the sum, and the whole row of P is stored, 0 at those keys.
__global__ void __launch_bounds__(256)
    naive_masked_softmax_kernel(const half* __restrict__ s, half* __restrict__ p, int n,
                                int rows_per_cta) {
  softmax_rows_in_smem<true>(s, p, n, rows_per_cta);
}

/// sum_dkv (grouped-query heads only): CTA kvh·⌈N/BM⌉ + j, kSumThreads threads, sums the G query
/// heads' dK_expanded rows of key block j into dK, then dV: the model's sum_dkv
/// (models/attention_backward.h), sum_head_groups (device_primitives.cuh) over naive's block_q keys.
template <int D, int BM>
__global__ void __launch_bounds__(kSumThreads)
    naive_bwd_sum_dkv_kernel(const half* __restrict__ dk_x, const half* __restrict__ dv_x,
                             half* __restrict__ dk, half* __restrict__ dv, int n, int group) {
  sum_head_groups<D, BM, kSumThreads>(dk_x, dv_x, dk, dv, n, group);
}

template <typename Kernel, typename... Args>
void launch(Kernel kernel, const char* name, std::int64_t grid, int threads, int smem_bytes,
            cudaStream_t stream, Args... args) {
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes),
             name);
  kernel<<<static_cast<unsigned>(grid), threads, static_cast<std::size_t>(smem_bytes), stream>>>(
      args...);
  check_launch(name);
}

template <int D, int BM, bool kTransA, bool kGroupedB = false>
void launch_product(const AttentionShape& s, const half* a, const half* b, half* out, float scale,
                    cudaStream_t stream) {
  constexpr int kBk = 64;
  launch(naive_bwd_product_kernel<D, BM, kBk, kTransA, kGroupedB>, "naive_bwd_product_kernel",
         s.heads_total() * ceil_div(s.seq, BM), kGemmThreads, 2 * (BM * kBk + kBk * D) * 2, stream,
         a, b, out, s.seq, scale, s.group());
}

/// naive_bwd_qk over the query heads: out = scale·a·bᵀ, b's rows of K/V head bh / G (BN = BM).
template <int D, int BM>
void launch_qk_grouped(const AttentionShape& s, const half* a, const half* b, half* out,
                       float scale, cudaStream_t stream) {
  launch(naive_bwd_qk_kernel<D, BM, BM>, "naive_bwd_qk_kernel",
         s.heads_total() * ceil_div(s.seq, BM) * ceil_div(s.seq, BM), kGemmThreads,
         (BM + BM) * D * 2, stream, a, b, out, s.seq, scale, s.group());
}

template <int D, int BM>
void launch_d(const AttentionShape& s, const NaiveBlocks& blocks, const NaiveBwdTensors& t,
              float scale, cudaStream_t stream, NaiveBwdPart part) {
  const auto all = [&](NaiveBwdPart p) { return part == NaiveBwdPart::kAll || part == p; };
  // With groups dv and dk write per query head, dp and dq read K/V head bh / G, and sum_dkv
  // adds each group's rows: the model's launches (models/naive_bwd.cc).
  const bool grouped = s.group() > 1;
  half* dv = grouped ? t.dv_expanded : t.dv;
  half* dk = grouped ? t.dk_expanded : t.dk;
  if (all(NaiveBwdPart::kDv)) launch_product<D, BM, true>(s, t.p, t.d_o, dv, 1.0f, stream);
  if (all(NaiveBwdPart::kDp)) {
    grouped ? launch_qk_grouped<D, BM>(s, t.d_o, t.v, t.dp, 1.0f, stream)
            : launch_naive_qk(s, blocks, t.d_o, t.v, t.dp, 1.0f, stream);
  }
  if (all(NaiveBwdPart::kSoftmaxBwd)) {
    const int rows = blocks.softmax_rows;
    launch(naive_softmax_bwd_kernel, "naive_softmax_bwd_kernel",
           s.heads_total() * ceil_div(s.seq, rows), 32 * rows, 2 * rows * s.seq * 2, stream, t.p,
           t.dp, t.ds, s.seq, rows);
  }
  if (all(NaiveBwdPart::kDq)) {
    grouped ? launch_product<D, BM, false, true>(s, t.ds, t.k, t.dq, scale, stream)
            : launch_product<D, BM, false>(s, t.ds, t.k, t.dq, scale, stream);
  }
  if (all(NaiveBwdPart::kDk)) launch_product<D, BM, true>(s, t.ds, t.q, dk, scale, stream);
  if (grouped && all(NaiveBwdPart::kSumDkv)) {
    launch(naive_bwd_sum_dkv_kernel<D, BM>, "naive_bwd_sum_dkv_kernel",
           static_cast<std::int64_t>(s.batch) * s.kv_heads_or_heads() * ceil_div(s.seq, BM),
           kSumThreads, 0, stream, t.dk_expanded, t.dv_expanded, t.dk, t.dv, s.seq, s.group());
  }
}

}  // namespace

void check_naive_bwd_supported(const AttentionShape& shape, const NaiveBlocks& blocks) {
  check_naive_supported(shape, blocks);
  if (shape.heads % shape.kv_heads_or_heads() != 0) {
    throw UsageError("naive-bwd: kv_heads " + std::to_string(shape.kv_heads_or_heads()) +
                     " must divide heads " + std::to_string(shape.heads));
  }
  if (shape.keys() != shape.seq) {
    throw UsageError("naive-bwd: the CUDA kernels take no seq_kv (Nkv " +
                     std::to_string(shape.keys()) + " != Nq " + std::to_string(shape.seq) +
                     "; the model's naive-bwd takes it)");
  }
  if (2 * blocks.softmax_rows * shape.seq * 2 > kMaxSmemBytes) {
    throw UsageError("naive-bwd: softmax_rows " + std::to_string(blocks.softmax_rows) +
                     " rows of P and dP at seq " + std::to_string(shape.seq) +
                     " exceed 227 KiB of shared memory");
  }
}

void launch_naive_bwd_forward(const AttentionShape& shape, const NaiveBlocks& blocks, const half* q,
                              const half* k, half* s, half* p, float scale, cudaStream_t stream) {
  check_naive_bwd_supported(shape, blocks);
  if (shape.group() > 1) {
    const bool big = blocks.block_q == 128;
    if (shape.head_dim == 64) {
      big ? launch_qk_grouped<64, 128>(shape, q, k, s, scale, stream)
          : launch_qk_grouped<64, 64>(shape, q, k, s, scale, stream);
    } else {
      big ? launch_qk_grouped<128, 128>(shape, q, k, s, scale, stream)
          : launch_qk_grouped<128, 64>(shape, q, k, s, scale, stream);
    }
  } else {
    launch_naive_qk(shape, blocks, q, k, s, scale, stream);
  }
  if (shape.causal) {
    const int rows = blocks.softmax_rows;  // rows·N·2 bytes ≤ 227 KiB: checked above (twice that)
    launch(naive_masked_softmax_kernel, "naive_masked_softmax_kernel",
           shape.heads_total() * ceil_div(shape.seq, rows), 32 * rows, rows * shape.seq * 2, stream,
           s, p, shape.seq, rows);
  } else {
    launch_naive_softmax(shape, blocks, s, p, stream);
  }
}

void launch_naive_bwd(const AttentionShape& shape, const NaiveBlocks& blocks,
                      const NaiveBwdTensors& t, float scale, cudaStream_t stream,
                      NaiveBwdPart part) {
  check_naive_bwd_supported(shape, blocks);
  if (shape.group() > 1 && (t.dk_expanded == nullptr || t.dv_expanded == nullptr)) {
    throw UsageError("naive-bwd: grouped-query heads need dk_expanded and dv_expanded");
  }
  const bool big = blocks.block_q == 128;
  if (shape.head_dim == 64) {
    big ? launch_d<64, 128>(shape, blocks, t, scale, stream, part)
        : launch_d<64, 64>(shape, blocks, t, scale, stream, part);
  } else {
    big ? launch_d<128, 128>(shape, blocks, t, scale, stream, part)
        : launch_d<128, 64>(shape, blocks, t, scale, stream, part);
  }
}

}  // namespace memwall::cuda
