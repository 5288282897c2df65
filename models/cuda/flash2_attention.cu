#include "models/cuda/flash2_attention.h"

#include <cstdint>
#include <string>

#include "models/cuda/cuda_check.h"
#include "models/cuda/device_primitives.cuh"
#include "sim/core/error.h"

namespace memwall::cuda {
namespace {

constexpr int kFlashThreads = 128;  // 4 warps
/// The split-KV combine's loads in flight per thread: L_accum values, and O_accum splits
/// (16 bytes each); models/flash2.cc's combine issues the same.
constexpr int kCombineLoadsPerThread = 4;
constexpr int kCombineSplitsInFlight = 4;
/// Rows of one combine CTA: as many as its threads cover with 4 columns each (FlashAttention-2's
/// combine takes 4 rows at d = 128, 8 at d = 64), so that every split's partial rows are spread
/// over many SMs.
template <int D>
constexpr int kCombineRows = kFlashThreads * 4 / D;
constexpr float kLn2 = 0.6931471805599453f;
constexpr int kNoMask = 1 << 30;  // a causal offset past every key: no mask

/// %ctaid.x, read afresh (asm volatile), so that the compiler recomputes what depends on it
/// instead of keeping it in a register.
__device__ __forceinline__ unsigned ctaid_x() {
  unsigned x;
  asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(x));
  return x;
}

/// Where a flash2_fwd_variant CTA works (the contract's causal / GQA / decode-packed / split-KV
/// variants), in the rows the kernel sees: after decode packing, "heads" are the packed heads and
/// nq the packed rows per head.
struct VariantGeometry {
  int nq;  ///< query rows per (packed) head
  int nkv;  ///< keys per KV head
  int group;  ///< (packed) query heads per KV head: KV head = bh / group
  /// Causal: Nkv − Nq of the unpacked shape, key j visible to row i iff j ≤ i + this; not causal
  /// (and decode-packed, where the mask is a no-op): kNoMask, past every key. One kernel for
  /// both, since its registers fit without spilling where a causal template flag's did not.
  int causal_offset;
  int splits;  ///< S; 1: O and L stored directly, else the fp32 partials
  int blocks_per_split;
  long long rows_total;  ///< (packed) heads · nq: the rows of one split's O_accum and L_accum
};

/// The outputs of one flash2_fwd launch: O (fp16) and L, or with splits > 1 the split's
/// O_accum [S][rows_total][d] and L_accum [S][rows_total] (fp32).
struct Flash2Outputs {
  half* o;
  float* l;
  float* o_accum;
  float* l_accum;
};

/// The body of flash2_fwd, for the unvaried kernel (kVariant false: one CTA per (bh, i), CTA index
/// bh·⌈N/BR⌉ + i, every K/V block of head bh) and for the variants (kVariant true: CTA index
/// m + Tr·(split + S·bh), K/V of head bh / group, the split's visible blocks only, the causal
/// mask, fp32 partials when split). Warp w owns query rows w·BR/4 … (w+1)·BR/4 − 1 of the block
/// (BR/64 m16 tiles). Scores are kept in the log2 domain: scale_log2 = scale·log2(e), so exp2 of a
/// scaled score is exp of scale·QKᵀ.
template <int D, int BR, int BC, int STAGES, bool kVariant>
__device__ __forceinline__ void flash2_fwd_body(const half* __restrict__ q,
                                                const half* __restrict__ k,
                                                const half* __restrict__ v, Flash2Outputs out,
                                                int n, const VariantGeometry& geo,
                                                float scale_log2) {
  constexpr int kWarps = kFlashThreads / 32;
  constexpr int kWarpRows = BR / kWarps;
  constexpr int kMt = kWarpRows / 16;
  constexpr int kDt = D / 8;
  static_assert(kMt >= 1 && kWarpRows % 16 == 0, "each warp owns a multiple of 16 rows");
  // Keys per register sub-block: all BC of them unless the O accumulators alone take 128
  // registers per thread (d = 128 with 32 rows per warp), then 32, so that nothing spills.
  constexpr int kSub = (kMt * kDt * 4 >= 128 && BC > 32 && BC % 32 == 0) ? 32 : BC;
  static_assert(BC % kSub == 0, "sub-blocks tile the key block");
  constexpr int kSubNt = kSub / 8;
  static_assert(BC % 16 == 0 && D % 16 == 0, "blocks must be multiples of 16");

  extern __shared__ uint4 smem_raw[];
  half* sq = reinterpret_cast<half*>(smem_raw);
  half* sk = sq + BR * D;
  half* sv = sk + STAGES * BC * D;

  // Unvaried: nq = nkv = n, every block of head bh. Variants: the geometry's rows and the K/V
  // blocks [j_begin, j_end) of KV head bh / group, seen from block j_begin on: kg, vg and nkv
  // start there, so that block j here is block j_begin + j of the head and the loop is the
  // unvaried one over blocks_kv = j_end − j_begin blocks.
  const int nq = kVariant ? geo.nq : n;
  const int blocks_q = (nq + BR - 1) / BR;
  const long long bh = kVariant ? blockIdx.x / blocks_q / geo.splits : blockIdx.x / blocks_q;
  const int row0 = static_cast<int>(blockIdx.x % blocks_q) * BR;
  const int rows = min(BR, nq - row0);
  int nkv = n;
  int blocks_kv = (n + BC - 1) / BC;
  int split = 0;
  long long kv_base = bh * n * D;
  // Key c (counted from block j_begin) is visible to row r of the block iff c ≤ r + diag_base
  // (always when not causal: kNoMask).
  int diag_base = 0;
  if constexpr (kVariant) {
    split = static_cast<int>(blockIdx.x / blocks_q % geo.splits);
    int j_end = (geo.nkv + BC - 1) / BC;
    j_end = min(j_end, (row0 + rows - 1 + geo.causal_offset) / BC + 1);
    const int j_begin = split * geo.blocks_per_split;
    j_end = min(j_end, j_begin + geo.blocks_per_split);
    blocks_kv = max(0, j_end - j_begin);
    nkv = geo.nkv - j_begin * BC;
    kv_base = (bh / geo.group * geo.nkv + static_cast<long long>(j_begin) * BC) * D;
    diag_base = row0 + geo.causal_offset - j_begin * BC;
  }
  const half* kg = k + kv_base;
  const half* vg = v + kv_base;

  auto load_kv = [&](int j) {
    const int stage = j % STAGES;
    const int k0 = j * BC;
    const int kv_rows = min(BC, nkv - k0);
    load_tile_rows<BC, D, kFlashThreads>(sk + stage * BC * D, kg + static_cast<long long>(k0) * D,
                                         kv_rows, D);
    load_tile_rows<BC, D, kFlashThreads>(sv + stage * BC * D, vg + static_cast<long long>(k0) * D,
                                         kv_rows, D);
  };

  // Group 0 holds Q and K/V block 0; groups 1 … STAGES−1 hold the next blocks. A split with no
  // block to visit (its chunk past the last block, or hidden by the causal mask) loads no Q rows,
  // as FlashAttention-2's split kernel returns before it loads Q (a row count, not a branch:
  // a branch around the load made ptxas spill at d = 128).
  load_tile_rows<BR, D, kFlashThreads>(sq, q + (bh * nq + row0) * D,
                                       kVariant && blocks_kv == 0 ? 0 : rows, D);
#pragma unroll
  for (int s = 0; s < STAGES; ++s) {
    if (s < blocks_kv) {
      load_kv(s);
    }
    cp_async_commit();
  }

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4;
  const int t = lane % 4;
  const int warp_row0 = warp * kWarpRows;

  float acc_o[kMt][kDt][4] = {};
  float row_max[kMt][2];
  float row_sum[kMt][2];
#pragma unroll
  for (int mt = 0; mt < kMt; ++mt) {
    row_max[mt][0] = row_max[mt][1] = -INFINITY;
    row_sum[mt][0] = row_sum[mt][1] = 0.0f;
  }

  for (int j = 0; j < blocks_kv; ++j) {
    cp_async_wait<STAGES - 1>();
    __syncthreads();
    const half* sk_s = sk + (j % STAGES) * BC * D;
    const half* sv_s = sv + (j % STAGES) * BC * D;

    // The block's BC keys are taken kSub at a time (online softmax per sub-block), so that the
    // score accumulators of 32 query rows × 64 keys at d = 128 do not spill; the K and V boxes
    // are still loaded once per block.
    const int kv_valid = nkv - j * BC;
    // Causal: the diagonal crosses this block when its last key is past the first row's last
    // visible key; then keys past each row's last visible key are masked.
    const bool diagonal = kVariant && j * BC + min(BC, kv_valid) - 1 > diag_base;
#pragma unroll 1
    for (int c0 = 0; c0 < BC; c0 += kSub) {
      // S = Q·Kᵀ for this warp's rows and the BC keys of block j.
      float acc_s[kMt][kSubNt][4] = {};
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        std::uint32_t a[kMt][4];
#pragma unroll
        for (int mt = 0; mt < kMt; ++mt) {
          load_a_fragment<D>(a[mt], sq, warp_row0 + mt * 16, kk * 16);
        }
#pragma unroll
        for (int np = 0; np < kSubNt / 2; ++np) {
          std::uint32_t b[4];
          load_b_fragments_nk<D>(b, sk_s, c0 + np * 16, kk * 16);
#pragma unroll
          for (int mt = 0; mt < kMt; ++mt) {
            mma_16816(acc_s[mt][2 * np], a[mt], b[0], b[1]);
            mma_16816(acc_s[mt][2 * np + 1], a[mt], b[2], b[3]);
          }
        }
      }

      // Keys past the end of the sequence (a partial last block) take no probability.
      if (kv_valid < c0 + kSub) {
#pragma unroll
        for (int mt = 0; mt < kMt; ++mt) {
#pragma unroll
          for (int nt = 0; nt < kSubNt; ++nt) {
            const int col = c0 + nt * 8 + 2 * t;
            if (col >= kv_valid) {
              acc_s[mt][nt][0] = acc_s[mt][nt][2] = -INFINITY;
            }
            if (col + 1 >= kv_valid) {
              acc_s[mt][nt][1] = acc_s[mt][nt][3] = -INFINITY;
            }
          }
        }
      }
      // Nor do keys past a row's last visible key: key j_abs > row_abs + Nkv − Nq.
      if constexpr (kVariant) {
        if (diagonal) {
#pragma unroll
          for (int mt = 0; mt < kMt; ++mt) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int last = diag_base + warp_row0 + mt * 16 + g + 8 * h - j * BC - c0;
#pragma unroll
              for (int nt = 0; nt < kSubNt; ++nt) {
                const int col = nt * 8 + 2 * t;
                if (col > last) {
                  acc_s[mt][nt][2 * h] = -INFINITY;
                }
                if (col + 1 > last) {
                  acc_s[mt][nt][2 * h + 1] = -INFINITY;
                }
              }
            }
          }
        }
      }

      // Online softmax: each thread holds rows g (h = 0) and g + 8 (h = 1) of each m tile; the
      // four threads of a quad share a row.
#pragma unroll
      for (int mt = 0; mt < kMt; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float block_max = -INFINITY;
#pragma unroll
          for (int nt = 0; nt < kSubNt; ++nt) {
            block_max = fmaxf(block_max, fmaxf(acc_s[mt][nt][2 * h], acc_s[mt][nt][2 * h + 1]));
          }
          block_max = fmaxf(block_max, __shfl_xor_sync(0xffffffffu, block_max, 1));
          block_max = fmaxf(block_max, __shfl_xor_sync(0xffffffffu, block_max, 2));
          const float new_max = fmaxf(row_max[mt][h], block_max * scale_log2);
          // Under the causal mask a row can have seen no visible key yet (in a later split):
          // subtract 0 instead of −inf, so that its probabilities are 0, not NaN.
          const float base = kVariant && new_max == -INFINITY ? 0.0f : new_max;
          const float correction = exp2f(row_max[mt][h] - base);
          row_max[mt][h] = new_max;
          float sum = 0.0f;
#pragma unroll
          for (int nt = 0; nt < kSubNt; ++nt) {
            const float p0 = exp2f(acc_s[mt][nt][2 * h] * scale_log2 - base);
            const float p1 = exp2f(acc_s[mt][nt][2 * h + 1] * scale_log2 - base);
            acc_s[mt][nt][2 * h] = p0;
            acc_s[mt][nt][2 * h + 1] = p1;
            sum += p0 + p1;
          }
          row_sum[mt][h] = row_sum[mt][h] * correction + sum;
#pragma unroll
          for (int dt = 0; dt < kDt; ++dt) {
            acc_o[mt][dt][2 * h] *= correction;
            acc_o[mt][dt][2 * h + 1] *= correction;
          }
        }
      }

      // O += P·V: the score accumulators of two adjacent n8 tiles are the A fragment of one k16 step.
#pragma unroll
      for (int kk = 0; kk < kSub / 16; ++kk) {
        std::uint32_t a[kMt][4];
#pragma unroll
        for (int mt = 0; mt < kMt; ++mt) {
          a[mt][0] = pack_half2(acc_s[mt][2 * kk][0], acc_s[mt][2 * kk][1]);
          a[mt][1] = pack_half2(acc_s[mt][2 * kk][2], acc_s[mt][2 * kk][3]);
          a[mt][2] = pack_half2(acc_s[mt][2 * kk + 1][0], acc_s[mt][2 * kk + 1][1]);
          a[mt][3] = pack_half2(acc_s[mt][2 * kk + 1][2], acc_s[mt][2 * kk + 1][3]);
        }
#pragma unroll
        for (int dp = 0; dp < kDt / 2; ++dp) {
          std::uint32_t b[4];
          load_b_fragments_kn<D>(b, sv_s, c0 + kk * 16, dp * 16);
#pragma unroll
          for (int mt = 0; mt < kMt; ++mt) {
            mma_16816(acc_o[mt][2 * dp], a[mt], b[0], b[1]);
            mma_16816(acc_o[mt][2 * dp + 1], a[mt], b[2], b[3]);
          }
        }
      }
    }

    __syncthreads();
    if (j + STAGES < blocks_kv) {
      load_kv(j + STAGES);
    }
    cp_async_commit();
  }
  cp_async_wait<0>();

  // O = acc / row sum, staged through the Q buffer (each warp rewrites only its own rows);
  // L = logsumexp of the scaled scores in natural log. Split-KV (variants): the split's O
  // normalised by its own ℓ and its own logsumexp, fp32, straight from the registers (a quad's
  // four float2 are one 32-byte sector); an empty split, or one whose keys a row cannot see,
  // gives O = 0 and L = −inf.
  const bool split_out = kVariant && geo.splits > 1;
  // Where the CTA's rows go. The d = 64 variant takes its place from the CTA index again here
  // rather than keeping it live through the loop, and the d = 128 one keeps it: with nvcc 13.0
  // each is the choice with which ptxas spills nothing (ptxas-registers-variants.txt).
  constexpr bool kRecompute = kVariant && D <= 64;
  const unsigned cta = kRecompute ? ctaid_x() : blockIdx.x;
  // o_row: the first row in O and L; out_row: in O_accum and L_accum when split, else o_row.
  const long long o_row = kRecompute ? static_cast<long long>(cta / blocks_q / geo.splits) * nq +
                                           static_cast<int>(cta % blocks_q) * BR
                                     : bh * nq + row0;
  const long long out_row =
      kRecompute ? static_cast<long long>(cta / blocks_q % geo.splits) * geo.rows_total + o_row
                 : (kVariant ? split * geo.rows_total : 0) + bh * nq + row0;
  const int rows_out = kRecompute ? min(BR, nq - static_cast<int>(cta % blocks_q) * BR) : rows;
#pragma unroll
  for (int mt = 0; mt < kMt; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float sum = row_sum[mt][h];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const int r = warp_row0 + mt * 16 + g + 8 * h;
      if (split_out) {
        const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
        if (r < rows_out) {
          float* dst = out.o_accum + (out_row + r) * D + 2 * t;
#pragma unroll
          for (int dt = 0; dt < kDt; ++dt) {
            *reinterpret_cast<float2*>(dst + dt * 8) =
                make_float2(acc_o[mt][dt][2 * h] * inv, acc_o[mt][dt][2 * h + 1] * inv);
          }
          if (t == 0) {
            out.l_accum[out_row + r] = sum > 0.0f ? row_max[mt][h] * kLn2 + logf(sum) : -INFINITY;
          }
        }
        continue;
      }
      const float inv = 1.0f / sum;
#pragma unroll
      for (int dt = 0; dt < kDt; ++dt) {
        store_half2<D>(sq, r, dt * 8 + 2 * t, acc_o[mt][dt][2 * h] * inv,
                       acc_o[mt][dt][2 * h + 1] * inv);
      }
      if (t == 0 && r < rows_out) {
        out.l[o_row + r] = row_max[mt][h] * kLn2 + logf(sum);
      }
    }
  }
  if (split_out) {
    return;
  }
  __syncthreads();
  store_tile_box<BR, D, kFlashThreads>(out.o + o_row * D, sq, rows_out, D, D);
}

/// flash2_fwd, not causal, K/V of the same head: the contract's unvaried kernel.
template <int D, int BR, int BC, int STAGES>
__global__ void __launch_bounds__(kFlashThreads)
    flash2_fwd_kernel(const half* __restrict__ q, const half* __restrict__ k,
                      const half* __restrict__ v, half* __restrict__ o, float* __restrict__ l,
                      int n, float scale_log2) {
  const VariantGeometry unused{};
  flash2_fwd_body<D, BR, BC, STAGES, false>(q, k, v, {o, l, nullptr, nullptr}, n, unused,
                                            scale_log2);
}

/// flash2_fwd with the contract's variants (causal, GQA/MQA, Nq ≠ Nkv, decode packing, split-KV).
template <int D, int BR, int BC, int STAGES>
__global__ void __launch_bounds__(kFlashThreads)
    flash2_fwd_variant_kernel(const half* __restrict__ q, const half* __restrict__ k,
                              const half* __restrict__ v, Flash2Outputs out, VariantGeometry geo,
                              float scale_log2) {
  flash2_fwd_body<D, BR, BC, STAGES, true>(q, k, v, out, 0, geo, scale_log2);
}

/// flash2_combine: one CTA per ((packed) bh, block of br = kCombineRows<D> rows), CTA index
/// bh·⌈nq/br⌉ + m. Loads
/// the S boxes of L_accum (rows values each) and of O_accum (rows × D fp32 each), once each, and
/// stores O (rows × D fp16) and L (rows fp32): L = log Σ_s exp(L_s), O = Σ_s exp(L_s − L)·O_s.
/// The L_accum values are spread over the CTA's threads, (split, row) pairs in turn, so that all
/// of a thread's loads are in flight before the first is used (as FlashAttention-2's combine
/// does); each row's logsumexp is reduced by one warp, its lanes taking the splits in turn;
/// O_accum is read kCombineSplitsInFlight splits at a time (each thread's loads of those
/// splits issued together, then used). models/flash2.cc follows both.
/// Shared memory: splits·br weights, then br logsumexps (fp32).
/// (minBlocks 1: without it ptxas caps this kernel at 32 registers and spills.)
template <int D>
__global__ void __launch_bounds__(kFlashThreads, 1)
    flash2_combine_kernel(const float* __restrict__ o_accum, const float* __restrict__ l_accum,
                          half* __restrict__ o, float* __restrict__ l, int nq, int br, int splits,
                          long long rows_total) {
  extern __shared__ float smem_f[];
  float* weight = smem_f;  // [splits][br]
  float* lse = smem_f + splits * br;  // [br]
  const int blocks_q = (nq + br - 1) / br;
  const long long bh = blockIdx.x / blocks_q;
  const int m0 = static_cast<int>(blockIdx.x % blocks_q) * br;
  const int rows = min(br, nq - m0);
  const long long row0 = bh * nq + m0;
  const int tid = static_cast<int>(threadIdx.x);

  // The L_accum boxes: the (split, row) pairs spread over the threads, consecutive rows of one
  // split on consecutive threads; a thread's loads are issued before any is stored.
  const int pairs = splits * rows;
  for (int i0 = 0; i0 < pairs; i0 += kCombineLoadsPerThread * kFlashThreads) {
    float value[kCombineLoadsPerThread];
#pragma unroll
    for (int j = 0; j < kCombineLoadsPerThread; ++j) {
      const int i = i0 + j * kFlashThreads + tid;
      value[j] = i < pairs ? l_accum[(i / rows) * rows_total + row0 + i % rows] : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < kCombineLoadsPerThread; ++j) {
      const int i = i0 + j * kFlashThreads + tid;
      if (i < pairs) weight[(i / rows) * br + i % rows] = value[j];
    }
  }
  __syncthreads();
  // Per row, one warp: its lanes take the splits in turn, and the max and the sum of exponentials
  // are combined across the lanes by shuffles (FlashAttention-2's combine spreads them likewise).
  const int warp = tid / 32, lane = tid % 32;
  for (int r = warp; r < rows; r += kFlashThreads / 32) {
    float mx = -INFINITY;
    for (int s = lane; s < splits; s += 32) mx = fmaxf(mx, weight[s * br + r]);
#pragma unroll
    for (int step = 16; step > 0; step /= 2) mx = fmaxf(mx, __shfl_xor_sync(~0u, mx, step));
    float sum = 0.0f;
    if (mx != -INFINITY) {
      for (int s = lane; s < splits; s += 32) sum += expf(weight[s * br + r] - mx);
    }
#pragma unroll
    for (int step = 16; step > 0; step /= 2) sum += __shfl_xor_sync(~0u, sum, step);
    const float total = mx == -INFINITY ? -INFINITY : mx + logf(sum);
    for (int s = lane; s < splits; s += 32) {
      const float w = weight[s * br + r];
      weight[s * br + r] = total == -INFINITY || w == -INFINITY ? 0.0f : expf(w - total);
    }
    if (lane == 0) lse[r] = total;
  }
  __syncthreads();
  for (int r = tid; r < rows; r += kFlashThreads) {
    l[row0 + r] = lse[r];
  }

  // O: each thread owns 4 consecutive columns of a row, so that one warp instruction reads 512
  // contiguous bytes of a split's box (every 32-byte sector in one request) and writes 256.
  constexpr int kQuads = D / 4;
  for (int idx = tid; idx < rows * kQuads; idx += kFlashThreads) {
    const int r = idx / kQuads;
    const int c = (idx % kQuads) * 4;
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int s0 = 0; s0 < splits; s0 += kCombineSplitsInFlight) {
      float4 x[kCombineSplitsInFlight];
#pragma unroll
      for (int j = 0; j < kCombineSplitsInFlight; ++j) {
        x[j] = s0 + j < splits ? *reinterpret_cast<const float4*>(
                                     o_accum + ((s0 + j) * rows_total + row0 + r) * D + c)
                               : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
#pragma unroll
      for (int j = 0; j < kCombineSplitsInFlight; ++j) {
        const float w = s0 + j < splits ? weight[(s0 + j) * br + r] : 0.0f;
        acc.x += w * x[j].x;
        acc.y += w * x[j].y;
        acc.z += w * x[j].z;
        acc.w += w * x[j].w;
      }
    }
    const uint2 packed = make_uint2(pack_half2(acc.x, acc.y), pack_half2(acc.z, acc.w));
    *reinterpret_cast<uint2*>(o + (row0 + r) * D + c) = packed;
  }
}

template <int D, int BR, int BC, int STAGES>
void launch_variant(const AttentionShape& shape, const half* q, const half* k, const half* v,
                    half* o, float* l, float scale, cudaStream_t stream) {
  auto* kernel = flash2_fwd_kernel<D, BR, BC, STAGES>;
  const int smem = (BR * D + 2 * STAGES * BC * D) * 2;
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
             "flash2_fwd_kernel");
  const std::int64_t grid = shape.heads_total() * ceil_div(shape.seq, BR);
  const float scale_log2 = scale * 1.4426950408889634f;
  kernel<<<static_cast<unsigned>(grid), kFlashThreads, static_cast<std::size_t>(smem), stream>>>(
      q, k, v, o, l, shape.seq, scale_log2);
  check_launch("flash2_fwd_kernel");
}

/// The variant kernel (and, split, the combine) for one instantiated (D, BR, BC, STAGES).
template <int D, int BR, int BC, int STAGES>
void launch_variant_kernels(const AttentionShape& shape, const Flash2Blocks& blocks, const half* q,
                            const half* k, const half* v, half* o, float* l, float scale,
                            const Flash2Workspace& ws, Flash2Part part, cudaStream_t stream) {
  const Flash2Packing pk = flash2_packing(shape);
  const int tc = static_cast<int>(ceil_div(shape.keys(), BC));
  const int splits = blocks.splits;
  VariantGeometry geo{};
  geo.nq = pk.seq;
  geo.nkv = shape.keys();
  geo.group = pk.group;
  geo.causal_offset = shape.causal && !pk.packed ? shape.keys() - shape.seq : kNoMask;
  geo.splits = splits;
  geo.blocks_per_split = static_cast<int>(ceil_div(tc, splits));
  geo.rows_total = static_cast<long long>(shape.batch) * pk.heads * pk.seq;
  if (splits > 1 && (ws.o_accum == nullptr || ws.l_accum == nullptr)) {
    throw UsageError("flash2: splits > 1 needs the O_accum and L_accum workspace");
  }

  const std::int64_t blocks_q = ceil_div(pk.seq, BR);
  const std::int64_t heads_packed = static_cast<std::int64_t>(shape.batch) * pk.heads;
  if (part != Flash2Part::kCombine) {
    auto* kernel = flash2_fwd_variant_kernel<D, BR, BC, STAGES>;
    const int smem = (BR * D + 2 * STAGES * BC * D) * 2;
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
               "flash2_fwd_variant_kernel");
    const std::int64_t grid = blocks_q * splits * heads_packed;
    const float scale_log2 = scale * 1.4426950408889634f;
    kernel<<<static_cast<unsigned>(grid), kFlashThreads, static_cast<std::size_t>(smem), stream>>>(
        q, k, v, Flash2Outputs{o, l, ws.o_accum, ws.l_accum}, geo, scale_log2);
    check_launch("flash2_fwd_variant_kernel");
  }
  if (splits == 1 || part == Flash2Part::kForward) {
    return;
  }
  auto* combine = flash2_combine_kernel<D>;
  const int combine_rows = kCombineRows<D>;
  const int combine_smem = (splits * combine_rows + combine_rows) * 4;
  check_cuda(
      cudaFuncSetAttribute(combine, cudaFuncAttributeMaxDynamicSharedMemorySize, combine_smem),
      "flash2_combine_kernel");
  combine<<<static_cast<unsigned>(ceil_div(pk.seq, combine_rows) * heads_packed), kFlashThreads,
            static_cast<std::size_t>(combine_smem), stream>>>(ws.o_accum, ws.l_accum, o, l, pk.seq,
                                                              combine_rows, splits, geo.rows_total);
  check_launch("flash2_combine_kernel");
}

using Launcher = void (*)(const AttentionShape&, const half*, const half*, const half*, half*,
                          float*, float, cudaStream_t);
using VariantLauncher = void (*)(const AttentionShape&, const Flash2Blocks&, const half*,
                                 const half*, const half*, half*, float*, float,
                                 const Flash2Workspace&, Flash2Part, cudaStream_t);

struct Entry {
  Flash2Variant variant;
  Launcher launcher;
  VariantLauncher variant_launcher;  ///< nullptr: no variant kernel at these blocks
};

/// The instantiated variants. The contract's defaults are (128, 128) for d = 64 and (128, 64)
/// for d = 128, stages 2; only those have the causal / GQA / decode / split-KV kernels.
const Entry kEntries[] = {
    {{64, 128, 128, 2}, launch_variant<64, 128, 128, 2>, launch_variant_kernels<64, 128, 128, 2>},
    {{64, 128, 64, 2}, launch_variant<64, 128, 64, 2>, nullptr},
    {{64, 64, 64, 2}, launch_variant<64, 64, 64, 2>, nullptr},
    {{64, 64, 128, 2}, launch_variant<64, 64, 128, 2>, nullptr},
    {{64, 64, 64, 3}, launch_variant<64, 64, 64, 3>, nullptr},
    {{128, 128, 64, 2}, launch_variant<128, 128, 64, 2>, launch_variant_kernels<128, 128, 64, 2>},
    {{128, 64, 64, 2}, launch_variant<128, 64, 64, 2>, nullptr},
    {{128, 64, 128, 2}, launch_variant<128, 64, 128, 2>, nullptr},
    {{128, 128, 32, 2}, launch_variant<128, 128, 32, 2>, nullptr},
    {{128, 64, 64, 3}, launch_variant<128, 64, 64, 3>, nullptr},
};

const Entry* find_entry(int head_dim, const Flash2Blocks& blocks) {
  for (const Entry& e : kEntries) {
    if (e.variant.head_dim == head_dim && e.variant.block_q == blocks.block_q &&
        e.variant.block_kv == blocks.block_kv && e.variant.stages == blocks.stages) {
      return &e;
    }
  }
  return nullptr;
}

}  // namespace

const std::vector<Flash2Variant>& flash2_variants() {
  static const std::vector<Flash2Variant> variants = [] {
    std::vector<Flash2Variant> out;
    for (const Entry& e : kEntries) {
      out.push_back(e.variant);
    }
    return out;
  }();
  return variants;
}

bool flash2_uses_variant_kernel(const AttentionShape& shape, const Flash2Blocks& blocks) {
  return shape.is_variant() || blocks.splits != 1;
}

Flash2Packing flash2_packing(const AttentionShape& shape) {
  Flash2Packing pk;
  pk.packed = shape.seq == 1 && shape.group() > 1;
  pk.heads = pk.packed ? shape.kv_heads_or_heads() : shape.heads;
  pk.seq = pk.packed ? shape.group() : shape.seq;
  pk.group = pk.packed ? 1 : shape.group();
  return pk;
}

std::int64_t flash2_o_accum_elements(const AttentionShape& shape, const Flash2Blocks& blocks) {
  return blocks.splits > 1 ? blocks.splits * shape.q_elements() : 0;
}

std::int64_t flash2_l_accum_elements(const AttentionShape& shape, const Flash2Blocks& blocks) {
  return blocks.splits > 1 ? blocks.splits * shape.heads_total() * shape.seq : 0;
}

void check_flash2_supported(const AttentionShape& shape, const Flash2Blocks& blocks) {
  const Entry* entry = find_entry(shape.head_dim, blocks);
  if (entry == nullptr) {
    std::string list;
    for (const Entry& e : kEntries) {
      list += (list.empty() ? "" : ", ") + std::string("(") + std::to_string(e.variant.head_dim) +
              "," + std::to_string(e.variant.block_q) + "," + std::to_string(e.variant.block_kv) +
              "," + std::to_string(e.variant.stages) + ")";
    }
    throw UsageError("flash2: no kernel for head_dim=" + std::to_string(shape.head_dim) +
                     " block_q=" + std::to_string(blocks.block_q) + " block_kv=" +
                     std::to_string(blocks.block_kv) + " stages=" + std::to_string(blocks.stages) +
                     "; instantiated (head_dim,block_q,block_kv,stages): " + list);
  }
  if (shape.batch <= 0 || shape.heads <= 0) {
    throw UsageError("flash2: batch and heads must be positive");
  }
  if (!flash2_uses_variant_kernel(shape, blocks)) {
    if (shape.seq <= 0 || shape.seq % 8 != 0) {
      throw UsageError("flash2: seq must be a positive multiple of 8 (16-byte rows), got " +
                       std::to_string(shape.seq));
    }
    return;
  }
  if (entry->variant_launcher == nullptr) {
    throw UsageError(
        "flash2: causal, kv_heads, seq_kv and splits have kernels only at the "
        "contract's default blocks (head_dim 64: 128x128, 128: 128x64, stages 2)");
  }
  if (shape.seq <= 0 || shape.keys() <= 0) {
    throw UsageError("flash2: seq and seq_kv must be positive");
  }
  if (shape.kv_heads < 0 || shape.heads % shape.kv_heads_or_heads() != 0) {
    throw UsageError("flash2: kv_heads=" + std::to_string(shape.kv_heads) +
                     " must divide heads=" + std::to_string(shape.heads));
  }
  if (shape.causal && shape.seq > shape.keys()) {
    throw UsageError("flash2: causal needs seq <= seq_kv (bottom-right aligned mask), got seq=" +
                     std::to_string(shape.seq) + " seq_kv=" + std::to_string(shape.keys()));
  }
  const std::int64_t tc = ceil_div(shape.keys(), blocks.block_kv);
  if (blocks.splits < 1 || blocks.splits > tc) {
    throw UsageError("flash2: splits=" + std::to_string(blocks.splits) + " must be 1 to the " +
                     std::to_string(tc) + " K/V blocks of seq_kv=" + std::to_string(shape.keys()));
  }
}

void launch_flash2_fwd(const AttentionShape& shape, const Flash2Blocks& blocks, const half* q,
                       const half* k, const half* v, half* o, float* l, float scale,
                       cudaStream_t stream, const Flash2Workspace& workspace, Flash2Part part) {
  check_flash2_supported(shape, blocks);
  const Entry* entry = find_entry(shape.head_dim, blocks);
  if (flash2_uses_variant_kernel(shape, blocks)) {
    entry->variant_launcher(shape, blocks, q, k, v, o, l, scale, workspace, part, stream);
  } else {
    entry->launcher(shape, q, k, v, o, l, scale, stream);
  }
}

}  // namespace memwall::cuda
