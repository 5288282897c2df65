#include "models/cuda/flash2_backward.h"

#include <cstdint>
#include <string>

#include "models/cuda/cuda_check.h"
#include "models/cuda/device_primitives.cuh"
#include "sim/core/error.h"

namespace memwall::cuda {
namespace {

constexpr int kSmallThreads = 128;  // the preprocessing and conversion CTAs: 4 warps
constexpr int kBwdThreads = 256;  // the backward CTA: 8 warps, each 16 rows of the K/V block
constexpr int kBwdWarps = kBwdThreads / 32;
constexpr int kBlockKv = 16 * kBwdWarps;
constexpr float kLog2e = 1.4426950408889634f;

/// Copies 4 bytes global → shared (cp.async.ca: the only size below 16 that cp.async takes).
__device__ __forceinline__ void cp_async_4(void* smem_dst, const void* gmem_src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_address(smem_dst)),
               "l"(gmem_src));
}

/// `count` fp32 values from global to shared memory: 16-byte chunks by cp.async.cg where source
/// and destination are 16-byte aligned (dst is), 4-byte copies before and after, so that nothing
/// outside the `count` values is read.
template <int Threads>
__device__ __forceinline__ void load_floats(float* dst, const float* src, int count) {
  const int tid = static_cast<int>(threadIdx.x);
  const int head = (reinterpret_cast<std::uintptr_t>(src) / 4) % 4 == 0 ? 0 : count;
  for (int c = tid; c < head; c += Threads) cp_async_4(dst + c, src + c);
  if (head > 0) return;  // an unaligned row of L or D (Nq not a multiple of 4): 4 bytes each
  for (int c = tid; c < count / 4; c += Threads) cp_async_16(dst + 4 * c, src + 4 * c);
  const int tail = count / 4 * 4;
  if (tid < count - tail) cp_async_4(dst + tail + tid, src + tail + tid);
}

/// dst[0] += x, dst[1] += y in global memory, atomically: one vector reduction on sm_90 (a quad's
/// four then cover one 32-byte sector, each sector reduced once, as the model's reduce box), two
/// scalar ones before (each sector then reduced twice, half of it each time).
__device__ __forceinline__ void reduce_add2(float* dst, float x, float y) {
#if __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float2*>(dst), make_float2(x, y));
#else
  atomicAdd(dst, x);
  atomicAdd(dst + 1, y);
#endif
}

/// Sum of the 8 products of two 16-byte chunks of halves.
__device__ __forceinline__ float dot8(const uint4& x, const uint4& y) {
  const half2* a = reinterpret_cast<const half2*>(&x);
  const half2* b = reinterpret_cast<const half2*>(&y);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 fa = __half22float2(a[i]);
    const float2 fb = __half22float2(b[i]);
    s += fa.x * fb.x + fa.y * fb.y;
  }
  return s;
}

/// acc (16 × N, N = 8·Nt) = A·Bᵀ over the head dim: A the 16 rows from a_row0 of a swizzled
/// [rows][D] tile (this warp's keys), B the N rows from b_row0 of another (queries), both
/// row-major: Sᵀ = K·Qᵀ and dPᵀ = V·dOᵀ for one strip.
template <int D, int Nt>
__device__ __forceinline__ void warp_rows_times_rows_t(float (&acc)[Nt][4], const half* a_tile,
                                                       int a_row0, const half* b_tile, int b_row0) {
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    std::uint32_t a[4];
    load_a_fragment<D>(a, a_tile, a_row0, kk * 16);
#pragma unroll
    for (int np = 0; np < Nt / 2; ++np) {
      std::uint32_t bf[4];
      load_b_fragments_nk<D>(bf, b_tile, b_row0 + np * 16, kk * 16);
      mma_16816(acc[2 * np], a, bf[0], bf[1]);
      mma_16816(acc[2 * np + 1], a, bf[2], bf[3]);
    }
  }
}

/// acc (16 × D) += strip·B: the strip's accumulators (16 × 8·Nt, two adjacent n8 tiles one k16 A
/// fragment) times the 8·Nt rows from b_row0 of a swizzled [rows][D] tile: dV += Pᵀ·dO and
/// dK += dSᵀ·Q for one strip.
template <int D, int Nt>
__device__ __forceinline__ void add_strip_times_rows(float (&acc)[D / 8][4],
                                                     const float (&strip)[Nt][4],
                                                     const half* b_tile, int b_row0) {
#pragma unroll
  for (int kk = 0; kk < Nt / 2; ++kk) {
    std::uint32_t a[4];
    a[0] = pack_half2(strip[2 * kk][0], strip[2 * kk][1]);
    a[1] = pack_half2(strip[2 * kk][2], strip[2 * kk][3]);
    a[2] = pack_half2(strip[2 * kk + 1][0], strip[2 * kk + 1][1]);
    a[3] = pack_half2(strip[2 * kk + 1][2], strip[2 * kk + 1][3]);
#pragma unroll
    for (int dp = 0; dp < D / 16; ++dp) {
      std::uint32_t bf[4];
      load_b_fragments_kn<D>(bf, b_tile, b_row0 + kk * 16, dp * 16);
      mma_16816(acc[2 * dp], a, bf[0], bf[1]);
      mma_16816(acc[2 * dp + 1], a, bf[2], bf[3]);
    }
  }
}

/// flash2_bwd_dot_do_o: CTA bh·⌈Nq/BR⌉ + m loads the dO and O boxes of Q block m (every chunk of
/// the thread in flight before the first is used), D = rowsum(dO∘O) through shared memory (so
/// that D's rows leave in one contiguous store), and clears the block's dQ_accum rows.
template <int D, int BR>
__global__ void __launch_bounds__(kSmallThreads)
    flash2_bwd_dot_do_o_kernel(const half* __restrict__ d_o, const half* __restrict__ o,
                               float* __restrict__ d, float* __restrict__ dq_accum, int nq) {
  constexpr int kChunksPerRow = D / kChunkHalves;
  constexpr int kItems = BR * kChunksPerRow / kSmallThreads;
  static_assert(kItems * kSmallThreads == BR * kChunksPerRow, "the threads cover the block");
  __shared__ float row_sum[BR];
  const int blocks_q = (nq + BR - 1) / BR;
  const long long bh = blockIdx.x / blocks_q;
  const int r0 = static_cast<int>(blockIdx.x % blocks_q) * BR;
  const int rows = min(BR, nq - r0);
  const long long base = (bh * nq + r0) * D;
  const int tid = static_cast<int>(threadIdx.x);
  uint4 x[kItems], y[kItems];
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    const int idx = it * kSmallThreads + tid;
    const int r = idx / kChunksPerRow, c = idx % kChunksPerRow;
    x[it] = y[it] = make_uint4(0, 0, 0, 0);
    if (r < rows) {
      x[it] = *reinterpret_cast<const uint4*>(d_o + base + r * D + c * kChunkHalves);
      y[it] = *reinterpret_cast<const uint4*>(o + base + r * D + c * kChunkHalves);
    }
  }
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    const int idx = it * kSmallThreads + tid;
    float s = dot8(x[it], y[it]);
#pragma unroll
    for (int m = 1; m < kChunksPerRow; m *= 2) s += __shfl_xor_sync(~0u, s, m);
    if (idx % kChunksPerRow == 0) row_sum[idx / kChunksPerRow] = s;
  }
  __syncthreads();
  for (int r = tid; r < rows; r += kSmallThreads) d[bh * nq + r0 + r] = row_sum[r];
  float4* acc = reinterpret_cast<float4*>(dq_accum + base);
  for (int i = tid; i < rows * D / 4; i += kSmallThreads) acc[i] = make_float4(0, 0, 0, 0);
}

/// flash2_bwd: CTA bh·⌈Nkv/BC⌉ + j, K/V block j of head bh (Algorithm 2's inner loop).
template <int D, int BR>
__global__ void __launch_bounds__(kBwdThreads, 1)
    flash2_bwd_kernel(Flash2BwdTensors t, int nq, int nkv, int group, int causal_offset,
                      bool causal, float scale, float scale_log2) {
  constexpr int BC = kBlockKv;
  // Queries per register strip: 16 at head_dim 128, 32 at 64 (the most with which ptxas spills
  // nothing: 32 and 64 spill 76 and 28 bytes).
  constexpr int kSub = D >= 128 ? 16 : 32;
  static_assert(BR % kSub == 0, "strips tile the Q block");
  constexpr int kNt = kSub / 8;  // n8 tiles of one warp's Sᵀ strip
  constexpr int kDt = D / 8;
  constexpr int kDqRowTiles = BR / 16;
  constexpr int kDqColParts = kBwdWarps / kDqRowTiles;
  constexpr int kDqCols = D / kDqColParts;
  static_assert(kDqRowTiles * kDqColParts == kBwdWarps && kDqCols % 16 == 0, "dQ warp grid");

  extern __shared__ uint4 smem_raw[];
  half* sk = reinterpret_cast<half*>(smem_raw);
  half* sv = sk + BC * D;
  half* sq = sv + BC * D;  // [2][BR][D]
  half* sdo = sq + 2 * BR * D;  // [2][BR][D]
  half* sds = sdo + 2 * BR * D;  // dSᵀ: [BC][BR]
  float* sl = reinterpret_cast<float*>(sds + BC * BR);  // [2][BR]
  float* sd = sl + 2 * BR;  // [2][BR]

  const int blocks_kv = (nkv + BC - 1) / BC;
  const int blocks_q = (nq + BR - 1) / BR;
  const long long bh = blockIdx.x / blocks_kv;
  const int c0 = static_cast<int>(blockIdx.x % blocks_kv) * BC;
  const int cols = min(BC, nkv - c0);
  const int first = !causal || c0 <= causal_offset ? 0 : (c0 - causal_offset) / BR;

  auto issue = [&](int i) {
    const int r0 = i * BR, rows = min(BR, nq - r0), b = i & 1;
    const long long row = bh * nq + r0;
    load_tile_rows<BR, D, kBwdThreads>(sq + b * BR * D, t.q + row * D, rows, D);
    load_tile_rows<BR, D, kBwdThreads>(sdo + b * BR * D, t.d_o + row * D, rows, D);
    load_floats<kBwdThreads>(sl + b * BR, t.l + row, rows);
    load_floats<kBwdThreads>(sd + b * BR, t.d + row, rows);
  };
  // K and V of the K/V head bh / group; dK and dV to it, or per query head when grouped.
  const long long kv_row = bh / group * nkv + c0;
  load_tile_rows<BC, D, kBwdThreads>(sk, t.k + kv_row * D, cols, D);
  load_tile_rows<BC, D, kBwdThreads>(sv, t.v + kv_row * D, cols, D);
  cp_async_commit();
  issue(first);
  cp_async_commit();

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4, tq = lane % 4;
  const int krow0 = warp * 16;
  float acc_dk[kDt][4] = {};
  float acc_dv[kDt][4] = {};

  for (int i = first; i < blocks_q; ++i) {
    if (i + 1 < blocks_q) issue(i + 1);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    const int r0 = i * BR, rows = min(BR, nq - r0), b = i & 1;
    const half* q_i = sq + b * BR * D;
    const half* do_i = sdo + b * BR * D;
    const float* l_i = sl + b * BR;
    const float* d_i = sd + b * BR;

    // The block's BR queries kSub at a time (so that the dK and dV accumulators and one strip of
    // Sᵀ and dSᵀ fit in registers without spilling); Q, dO, L and D are loaded once per block.
#pragma unroll 1
    for (int q0 = 0; q0 < BR; q0 += kSub) {
      // Sᵀ = K·Qᵀ for this warp's 16 keys and kSub queries, then Pᵀ = exp(scale·Sᵀ − L) with the
      // masked entries (queries past the block, keys past the sequence, keys the causal mask
      // hides) 0.
      float acc_s[kNt][4] = {};
      warp_rows_times_rows_t<D>(acc_s, sk, krow0, q_i, q0);
#pragma unroll
      for (int nt = 0; nt < kNt; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = krow0 + g + 8 * (e >> 1), query = q0 + nt * 8 + 2 * tq + (e & 1);
          const bool visible =
              query < rows && key < cols && (!causal || c0 + key <= r0 + query + causal_offset);
          acc_s[nt][e] = visible ? exp2f(acc_s[nt][e] * scale_log2 - l_i[query] * kLog2e) : 0.0f;
        }
      }
      // dV += Pᵀ·dO: the P accumulators of two adjacent n8 tiles are one k16 A fragment.
      add_strip_times_rows<D>(acc_dv, acc_s, do_i, q0);
      // dPᵀ = V·dOᵀ, then dSᵀ = Pᵀ∘(dPᵀ − D), kept in registers and written to shared memory.
      float acc_ds[kNt][4] = {};
      warp_rows_times_rows_t<D>(acc_ds, sv, krow0, do_i, q0);
#pragma unroll
      for (int nt = 0; nt < kNt; ++nt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int query = q0 + nt * 8 + 2 * tq;
          // (Past the block's rows D is not loaded: those entries are 0, as P is.)
          const float ds0 =
              query < rows ? acc_s[nt][2 * h] * (acc_ds[nt][2 * h] - d_i[query]) : 0.0f;
          const float ds1 = query + 1 < rows
                                ? acc_s[nt][2 * h + 1] * (acc_ds[nt][2 * h + 1] - d_i[query + 1])
                                : 0.0f;
          acc_ds[nt][2 * h] = ds0;
          acc_ds[nt][2 * h + 1] = ds1;
          store_half2<BR>(sds, krow0 + g + 8 * h, query, ds0, ds1);
        }
      }
      // dK += dSᵀ·Q.
      add_strip_times_rows<D>(acc_dk, acc_ds, q_i, q0);
    }
    __syncthreads();

    // dQ_accum += dS·K: warp (rt, cp) takes rows 16·rt … and kDqCols columns from cp·kDqCols,
    // dS read transposed from dSᵀ; one atomic add per element of the block's valid rows.
    {
      const int rt = warp % kDqRowTiles, cp = warp / kDqRowTiles;
      float acc_dq[kDqCols / 8][4] = {};
#pragma unroll
      for (int kk = 0; kk < BC / 16; ++kk) {
        std::uint32_t a[4];
        load_a_fragment_trans<BR>(a, sds, rt * 16, kk * 16);
#pragma unroll
        for (int np = 0; np < kDqCols / 16; ++np) {
          std::uint32_t bf[4];
          load_b_fragments_kn<D>(bf, sk, kk * 16, cp * kDqCols + np * 16);
          mma_16816(acc_dq[2 * np], a, bf[0], bf[1]);
          mma_16816(acc_dq[2 * np + 1], a, bf[2], bf[3]);
        }
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = rt * 16 + g + 8 * h;
        if (r < rows) {
          float* dst = t.dq_accum + (bh * nq + r0 + r) * D + cp * kDqCols + 2 * tq;
#pragma unroll
          for (int nt = 0; nt < kDqCols / 8; ++nt) {
            reduce_add2(dst + nt * 8, acc_dq[nt][2 * h], acc_dq[nt][2 * h + 1]);
          }
        }
      }
    }
    __syncthreads();
  }
  cp_async_wait<0>();

  // dK (scaled) and dV staged through the Q and dO buffers, then stored as 16-byte chunks.
  half* stage_k = sq;
  half* stage_v = sdo;
#pragma unroll
  for (int dt = 0; dt < kDt; ++dt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = krow0 + g + 8 * h, c = dt * 8 + 2 * tq;
      store_half2<D>(stage_k, r, c, scale * acc_dk[dt][2 * h], scale * acc_dk[dt][2 * h + 1]);
      store_half2<D>(stage_v, r, c, acc_dv[dt][2 * h], acc_dv[dt][2 * h + 1]);
    }
  }
  __syncthreads();
  const long long out_row = group > 1 ? bh * nkv + c0 : kv_row;
  store_tile_box<BC, D, kBwdThreads>((group > 1 ? t.dk_expanded : t.dk) + out_row * D, stage_k,
                                     cols, D, D);
  store_tile_box<BC, D, kBwdThreads>((group > 1 ? t.dv_expanded : t.dv) + out_row * D, stage_v,
                                     cols, D, D);
}

/// flash2_bwd_convert_dq: CTA bh·⌈Nq/BR⌉ + m, dQ = scale·dQ_accum for Q block m in fp16 (every
/// float4 of the thread loaded before the first is converted).
template <int D, int BR>
__global__ void __launch_bounds__(kSmallThreads)
    flash2_bwd_convert_dq_kernel(const float* __restrict__ dq_accum, half* __restrict__ dq, int nq,
                                 float scale) {
  constexpr int kItems = BR * D / 4 / kSmallThreads;
  static_assert(kItems * kSmallThreads * 4 == BR * D, "the threads cover the block");
  const int blocks_q = (nq + BR - 1) / BR;
  const long long bh = blockIdx.x / blocks_q;
  const int r0 = static_cast<int>(blockIdx.x % blocks_q) * BR;
  const int count = min(BR, nq - r0) * D / 4;
  const long long base = (bh * nq + r0) * D;
  const float4* src = reinterpret_cast<const float4*>(dq_accum + base);
  uint2* dst = reinterpret_cast<uint2*>(dq + base);
  const int tid = static_cast<int>(threadIdx.x);
  float4 x[kItems];
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    const int i = it * kSmallThreads + tid;
    x[it] = i < count ? src[i] : make_float4(0, 0, 0, 0);
  }
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    const int i = it * kSmallThreads + tid;
    if (i < count) {
      dst[i] = make_uint2(pack_half2(scale * x[it].x, scale * x[it].y),
                          pack_half2(scale * x[it].z, scale * x[it].w));
    }
  }
}

/// flash2_bwd_sum_dkv: CTA kvh·⌈Nkv/BC⌉ + j sums the G query heads' dK_expanded rows of K/V block
/// j into dK, then dV (sum_head_groups, device_primitives.cuh, over blocks of BC keys).
template <int D>
__global__ void __launch_bounds__(kBwdThreads)
    flash2_bwd_sum_dkv_kernel(const half* __restrict__ dk_x, const half* __restrict__ dv_x,
                              half* __restrict__ dk, half* __restrict__ dv, int nkv, int group) {
  sum_head_groups<D, kBlockKv, kBwdThreads>(dk_x, dv_x, dk, dv, nkv, group);
}

template <int D, int BR>
void launch(const AttentionShape& shape, const Flash2BwdTensors& t, float scale,
            cudaStream_t stream, Flash2BwdPart part) {
  const int nq = shape.seq, nkv = shape.keys();
  const std::int64_t bh = shape.heads_total();
  const auto grid_q = static_cast<unsigned>(bh * ceil_div(nq, BR));
  const auto all = [&](Flash2BwdPart p) { return part == Flash2BwdPart::kAll || part == p; };
  if (all(Flash2BwdPart::kDotDoO)) {
    flash2_bwd_dot_do_o_kernel<D, BR>
        <<<grid_q, kSmallThreads, 0, stream>>>(t.d_o, t.o, t.d, t.dq_accum, nq);
    check_launch("flash2_bwd_dot_do_o_kernel");
  }
  if (all(Flash2BwdPart::kBackward)) {
    auto* kernel = flash2_bwd_kernel<D, BR>;
    const int smem = (2 * kBlockKv + 4 * BR) * D * 2 + kBlockKv * BR * 2 + 4 * BR * 4;
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
               "flash2_bwd_kernel");
    const auto grid = static_cast<unsigned>(bh * ceil_div(nkv, kBlockKv));
    kernel<<<grid, kBwdThreads, static_cast<std::size_t>(smem), stream>>>(
        t, nq, nkv, shape.group(), nkv - nq, shape.causal, scale, scale * kLog2e);
    check_launch("flash2_bwd_kernel");
  }
  if (all(Flash2BwdPart::kConvertDq)) {
    flash2_bwd_convert_dq_kernel<D, BR>
        <<<grid_q, kSmallThreads, 0, stream>>>(t.dq_accum, t.dq, nq, scale);
    check_launch("flash2_bwd_convert_dq_kernel");
  }
  if (shape.group() > 1 && all(Flash2BwdPart::kSumDkv)) {
    const auto grid = static_cast<unsigned>(static_cast<std::int64_t>(shape.batch) *
                                            shape.kv_heads_or_heads() * ceil_div(nkv, kBlockKv));
    flash2_bwd_sum_dkv_kernel<D><<<grid, kBwdThreads, 0, stream>>>(t.dk_expanded, t.dv_expanded,
                                                                   t.dk, t.dv, nkv, shape.group());
    check_launch("flash2_bwd_sum_dkv_kernel");
  }
}

}  // namespace

Flash2BwdBlocks flash2_bwd_blocks(const AttentionShape& shape) {
  if (shape.heads % shape.kv_heads_or_heads() != 0) {
    throw UsageError("flash2-bwd: kv_heads must divide heads");
  }
  if (shape.causal && shape.seq > shape.keys()) {
    throw UsageError("flash2-bwd: causal needs seq <= seq_kv");
  }
  if (shape.head_dim == 64) return {128, kBlockKv};
  if (shape.head_dim == 128) return {64, kBlockKv};
  throw UsageError("flash2-bwd: head_dim " + std::to_string(shape.head_dim) +
                   " is not instantiated (64 or 128)");
}

void launch_flash2_bwd(const AttentionShape& shape, const Flash2BwdTensors& t, float scale,
                       cudaStream_t stream, Flash2BwdPart part) {
  const Flash2BwdBlocks blocks = flash2_bwd_blocks(shape);
  if (blocks.block_q == 128) {
    launch<64, 128>(shape, t, scale, stream, part);
  } else {
    launch<128, 64>(shape, t, scale, stream, part);
  }
}

}  // namespace memwall::cuda
