/// A FlashAttention-3-style forward on Hopper (Shah et al. 2024, Algorithm 1): a persistent grid,
/// one producer warpgroup loading Q, K and V with TMA into shared memory, two consumer warpgroups
/// computing S = Q K^T and O += P V with wgmma.mma_async, the online softmax in registers, the
/// two consumers' softmaxes overlapped with each other's products (pingpong), and each consumer's
/// softmax overlapped with its own P V product of the block before (intra-warpgroup overlap).
/// fp16 in and out, fp32 accumulators and logsumexp; causal (aligned bottom-right, as
/// FlashAttention-2 >= 2.1 and 3 do) or not; grouped-query heads by index (query head bh reads
/// K/V head bh / (heads / kv_heads)).
///
///   Q [B*H][Nq][d], K and V [B*Hkv][Nkv][d], O [B*H][Nq][d] fp16, L [B*H][Nq] fp32 (natural log)
///
/// The kernel, per CTA (384 threads, one CTA per SM, grid = min(tiles, SMs)); a tile is one
/// (query head, Q block of 128 rows), walked CTA c: tiles c, c + grid, ..., head by head, or when
/// causal the longest first (every head's last Q block, then the one before, ...):
/// - warpgroup 0, the producer, gives up registers (setmaxnreg 24) and one of its threads loads
///   each tile's Q block (d/64 boxes of 128 rows x 64 columns, 128-byte swizzle) once the last
///   tile's products are done with it, then the tile's visible K/V blocks of 128 keys into a
///   STAGES-deep ring (K and V of a stage on their own full barriers, so S can start before V
///   lands, and K and V emptied on their own barriers, each one arrival per consumer, so the next
///   K can load while this V is still being read);
/// - warpgroups 1 and 2, the consumers (setmaxnreg 240), each own 64 rows of the Q block. Per
///   K/V block j: [wait for its turn] issue S_j = Q K_j^T (d/16 k16 steps, m64n128k16, both from
///   shared memory) and O += P_{j-1} V_{j-1} (8 k16 steps, m64n{d}k16, P from registers: the
///   accumulator layout converted pairwise to fp16 is the A fragment), [give the other consumer
///   its turn], wait for S_j, mask, softmax (row max and sum over the quad of lanes that share a
///   row, one ex2 each with the scale folded in), wait for the P V product, release its V,
///   rescale O;
///   after the last block the last P V product; then O / l through a 128-byte-swizzled staging
///   buffer stored with TMA (the next tile's loads and products overlap the store), and L.
///
/// Shared memory: Q (128 d 2 bytes), STAGES x (K + V) (2 x 128 d 2), O staging (128 d 2), 1 KiB of
/// alignment slack and the barriers: 192.3 KiB at d = 128 (2 stages), 160.3 KiB at d = 64 (4).
///
/// Usage: flash3_attention [--quick | --profile | --smcount | --variants | --list] [--sms N]
///   default: the CPU checks (ragged, causal, grouped-query, Nq != Nkv; O and L against a double
///   reference), then every case of the sweep timed (median of 20 launches after 3 warm-ups, the
///   L2 flushed before each); --quick: the checks and two cases, 5 launches; --profile: four
///   cases once each, for ncu (no checks); --smcount: the SM-count experiment's cases;
///   --variants: three shapes, each timed as the forward, its products alone (no softmax) and
///   its softmax alone (no wgmma), all else the same (with --profile: once each); --case
///   B,H,Hkv,N,Nkv,d,causal (repeatable): those shapes instead of a list's; --list: the
///   sweep's shapes as CSV for models/cuda/torch_sdpa.py, nothing run; --sms N: in a green
///   context of N SMs (models/cuda/green_context.h). TFLOP/s counts 4 Nq Nkv d per head (half of
///   it when causal, FlashAttention's convention). Column sm_mhz: CTA 0's clock64 over
///   %globaltimer during the last timed launch.
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "models/cuda/green_context.h"
#include "models/cuda/hopper/hopper_host.cuh"
#include "models/cuda/hopper/hopper_ptx.cuh"
#include "models/cuda/ubench/ubench_common.cuh"

namespace {

using namespace memwall::hopper;

constexpr int kBr = 128;  // query rows per tile: 64 per consumer warpgroup
constexpr int kBc = 128;  // keys per K/V block
constexpr int kRowBytes = 128;  // one box row: 64 fp16 columns, one swizzle row
constexpr int kThreads = 384;  // producer + two consumer warpgroups
constexpr int kProducerRegisters = 24;
constexpr int kConsumerRegisters = 240;
// Named barriers: 1 + cw for consumer cw's own epilogue, 3 + cw for its turn at the tensor cores.
constexpr int kEpilogueBarrier = 1;
constexpr int kTurnBarrier = 3;

template <int D, int STAGES>
struct Fa3 {
  static_assert(D == 64 || D == 128, "head_dim: 64 or 128");
  static constexpr int kChunks = D / 64;  // 64-column boxes per row of Q, K, V, O
  static constexpr int kQBytes = kBr * D * 2;
  static constexpr int kKvBytes = kBc * D * 2;  // K or V of one stage
  static constexpr int kOBytes = kBr * D * 2;  // the staging buffer, 64 rows per consumer
  static constexpr int kSmemBytes =
      1024 /*alignment slack*/ + kQBytes + STAGES * 2 * kKvBytes + kOBytes + 256;
};

/// The shared-memory carve-up of one CTA (1024-byte aligned: the swizzle pattern needs it).
template <int D, int STAGES>
struct Smem {
  using T = Fa3<D, STAGES>;
  unsigned char* q;  // kChunks boxes of kBr x 64
  unsigned char* k;  // STAGES x kChunks boxes of kBc x 64
  unsigned char* v;  // the same
  unsigned char* o;  // consumer cw's 64 rows at cw x 64 x D x 2, kChunks boxes of 64 x 64 each
  std::uint64_t* q_full;  // the Q block has landed
  std::uint64_t* q_empty;  // both consumers' last S product of the tile is done
  std::uint64_t* k_full;  // STAGES
  std::uint64_t* v_full;  // STAGES
  std::uint64_t* k_empty;  // STAGES: both consumers' S products are done with the stage's K
  std::uint64_t* v_empty;  // STAGES: both consumers' P V products are done with its V
  __device__ explicit Smem(unsigned char* raw) {
    q = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(raw) + 1023) &
                                         ~std::uintptr_t(1023));
    k = q + T::kQBytes;
    v = k + STAGES * T::kKvBytes;
    o = v + STAGES * T::kKvBytes;
    q_full = reinterpret_cast<std::uint64_t*>(o + T::kOBytes);
    q_empty = q_full + 1;
    k_full = q_empty + 1;
    v_full = k_full + STAGES;
    k_empty = v_full + STAGES;
    v_empty = k_empty + STAGES;
  }
};

/// The problem and the walk over its tiles (identical in producer and consumers).
struct Problem {
  int bh, group, nq, nkv, causal;  // query heads (B*H), query heads per K/V head
  float scale_log2;  // softmax scale x log2(e)
  __host__ __device__ int q_blocks() const { return (nq + kBr - 1) / kBr; }
  __host__ __device__ int kv_blocks() const { return (nkv + kBc - 1) / kBc; }
  __host__ __device__ int tiles() const { return bh * q_blocks(); }
  /// Tile t: its query head and Q block. Head by head when every tile is the same work; causal,
  /// the longest first across all heads (Q block n-1 of every head, then n-2, ...), so that the
  /// CTAs' static shares even out (head by head, CTA c's Q blocks would be c, c + grid, ... mod
  /// the blocks of a head: 3x the work of another CTA's at N = 16384).
  __host__ __device__ void tile(int t, int& head, int& qb) const {
    if (causal) {
      qb = q_blocks() - 1 - t / bh;
      head = t % bh;
    } else {
      head = t / q_blocks();
      qb = t % q_blocks();
    }
  }
  /// K/V blocks Q block qb sees: all, or (causal, bottom-right) up to its last row's diagonal.
  __host__ __device__ int visible_blocks(int qb) const {
    if (!causal) return kv_blocks();
    const int last_row = min(qb * kBr + kBr - 1, nq - 1);
    const int last_key = last_row + (nkv - nq);
    return last_key < 0 ? 0 : min(kv_blocks(), last_key / kBc + 1);
  }
};

/// One thread of the producer warpgroup: Q per tile, then the tile's K/V blocks, in the
/// consumers' order.
template <int D, int STAGES>
__device__ void produce(const CUtensorMap& map_q, const CUtensorMap& map_k,
                        const CUtensorMap& map_v, const Smem<D, STAGES>& sm, const Problem& pr) {
  using T = Fa3<D, STAGES>;
  int it = 0, loaded_q = 0;
  for (int t = blockIdx.x; t < pr.tiles(); t += gridDim.x) {
    int head, qb;
    pr.tile(t, head, qb);
    const int blocks = pr.visible_blocks(qb), kv_head = head / pr.group;
    if (blocks == 0) continue;  // no key visible: the consumers write O = 0, L = -inf
    mbarrier_wait(sm.q_empty, (loaded_q & 1) ^ 1);
    mbarrier_arrive_expect_tx(sm.q_full, T::kQBytes);
#pragma unroll
    for (int c = 0; c < T::kChunks; ++c) {
      tma_load_3d(sm.q + c * kBr * kRowBytes, &map_q, sm.q_full, 64 * c, qb * kBr, head);
    }
    ++loaded_q;
    for (int j = 0; j < blocks; ++j, ++it) {
      const int s = it % STAGES;
      mbarrier_wait(&sm.k_empty[s], ((it / STAGES) & 1) ^ 1);
      mbarrier_arrive_expect_tx(&sm.k_full[s], T::kKvBytes);
#pragma unroll
      for (int c = 0; c < T::kChunks; ++c) {
        tma_load_3d(sm.k + s * T::kKvBytes + c * kBc * kRowBytes, &map_k, &sm.k_full[s], 64 * c,
                    j * kBc, kv_head);
      }
      mbarrier_wait(&sm.v_empty[s], ((it / STAGES) & 1) ^ 1);
      mbarrier_arrive_expect_tx(&sm.v_full[s], T::kKvBytes);
#pragma unroll
      for (int c = 0; c < T::kChunks; ++c) {
        tma_load_3d(sm.v + s * T::kKvBytes + c * kBc * kRowBytes, &map_v, &sm.v_full[s], 64 * c,
                    j * kBc, kv_head);
      }
    }
  }
}

/// Row reductions over the 4 lanes (a quad) that hold one accumulator row.
__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xFFFFFFFFu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xFFFFFFFFu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xFFFFFFFFu, x, 1);
  return x + __shfl_xor_sync(0xFFFFFFFFu, x, 2);
}
/// v[0] op ... op v[2 W - 1] as a tree (W a power of two; `v` is overwritten).
template <int W, class Op>
__device__ __forceinline__ float tree(float* v, Op op) {
#pragma unroll
  for (int k = 0; k < W; ++k) v[k] = op(v[k], v[k + W]);
  if constexpr (W > 1) {
    return tree<W / 2>(v, op);
  } else {
    return v[0];
  }
}

/// The max and the sum of row r's N / 4 values of this thread in a 64 x N accumulator (registers
/// 4 c + 2 r and 4 c + 2 r + 1), as trees: log2 dependent steps, not N / 4.
template <int N, int R>
__device__ __forceinline__ float row_max(const float (&a)[N / 2]) {
  float v[N / 4];
#pragma unroll
  for (int c = 0; c < N / 8; ++c) {
    v[2 * c] = a[4 * c + 2 * R];
    v[2 * c + 1] = a[4 * c + 2 * R + 1];
  }
  return tree<N / 8>(v, [](float x, float y) { return fmaxf(x, y); });
}
template <int N, int R>
__device__ __forceinline__ float row_sum(const float (&a)[N / 2]) {
  float v[N / 4];
#pragma unroll
  for (int c = 0; c < N / 8; ++c) {
    v[2 * c] = a[4 * c + 2 * R];
    v[2 * c + 1] = a[4 * c + 2 * R + 1];
  }
  return tree<N / 8>(v, [](float x, float y) { return x + y; });
}

/// 2^x in one MUFU.EX2 (flush-to-zero; -inf gives 0), without exp2f's range fix-ups.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ std::uint32_t pack_half2(float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<const std::uint32_t*>(&h);
}

/// The online softmax of row R of this thread's part of a 64 x N score block `s` (in place: the
/// scores become 2^(s scale_log2 - max), unnormalised): the running max `m` (log2 units) and
/// partial sum `l` updated, `corr` the factor that rescales what was accumulated before.
template <int N, int R>
__device__ __forceinline__ void softmax_row(float (&s)[N / 2], float& m, float& l, float& corr,
                                            float scale_log2) {
  // The scale is positive: the max of the scaled row is the scaled max.
  const float mx = fmaxf(m, quad_max(row_max<N, R>(s)) * scale_log2);
  const float base = mx == -INFINITY ? 0.0f : mx;  // a row with nothing visible yet
  corr = exp2_approx(m - base);
  m = mx;
#pragma unroll
  for (int c = 0; c < N / 8; ++c) {
    s[4 * c + 2 * R] = exp2_approx(fmaf(s[4 * c + 2 * R], scale_log2, -base));
    s[4 * c + 2 * R + 1] = exp2_approx(fmaf(s[4 * c + 2 * R + 1], scale_log2, -base));
  }
  l = l * corr + row_sum<N, R>(s);
}

/// What a launch computes: the forward, or (for measuring the parts, --variants) one of its two
/// halves alone with everything else the same — the loads, barriers, turns and stores.
enum Mode { kFull = 0, kProductsOnly = 1, kSoftmaxOnly = 2 };

/// One consumer warpgroup (cw = 0 or 1: rows cw x 64 .. of every Q block).
template <int D, int STAGES, int MODE>
__device__ void consume(const CUtensorMap& map_o, float* lse, const Smem<D, STAGES>& sm,
                        const Problem& pr, int cw) {
  using T = Fa3<D, STAGES>;
  const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, q4 = lane % 4;
  unsigned char* staging = sm.o + cw * 64 * D * 2;
  const int my_turn = kTurnBarrier + cw, their_turn = kTurnBarrier + 1 - cw;
  float o[D / 2];  // O accumulator: 64 x D per warpgroup
  float s[kBc / 2];  // S_j, then P_j in fp32
  std::uint32_t p[kBc / 4];  // P_{j-1} in fp16 pairs: the A of the P V product
  float m[2], l[2];  // per row (g, g + 8): running max (log2 units, scaled) and partial sum
  if constexpr (MODE == kSoftmaxOnly) {  // no product writes them
#pragma unroll
    for (int i = 0; i < kBc / 2; ++i) s[i] = 0.0f;
  }
  // The consumers take turns at the tensor cores: consumer 0 goes first.
  if (cw == 1) named_barrier_arrive(my_turn - 1, 256);
  int it = 0, used_q = 0;  // K/V blocks and Q blocks used so far (the producer's counts)
  for (int t = blockIdx.x; t < pr.tiles(); t += gridDim.x) {
    int head, qb;
    pr.tile(t, head, qb);
    const int blocks = pr.visible_blocks(qb);
    const int row0 = qb * kBr + cw * 64 + 16 * warp + g;  // this thread's rows: row0, row0 + 8
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o[i] = 0.0f;
    m[0] = m[1] = -INFINITY;
    l[0] = l[1] = 0.0f;
    if (blocks > 0) mbarrier_wait(sm.q_full, used_q & 1);
    const std::uint32_t q_base = smem_addr(sm.q) + cw * 64 * kRowBytes;
    // The products of one step, issued and committed as one group each. No wgmma sits under a
    // condition and nothing reads an accumulator while its own product runs: ptxas keeps them
    // asynchronous only then (otherwise it serialises every wgmma of the kernel, C7514).
    const auto issue_s = [&](int block) {
      const std::uint32_t k_base = smem_addr(sm.k + (block % STAGES) * T::kKvBytes);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        // K-major: 16 columns are 32 bytes along a swizzled row, 64-column boxes apart.
        const int chunk = kk / 4, within = (kk % 4) * 32;
        const std::uint64_t da = smem_descriptor(q_base + chunk * kBr * kRowBytes + within, 16,
                                                 8 * kRowBytes, Swizzle::k128B);
        const std::uint64_t db = smem_descriptor(k_base + chunk * kBc * kRowBytes + within, 16,
                                                 8 * kRowBytes, Swizzle::k128B);
        Wgmma<kBc, 0>::mma(s, da, db, kk > 0);
      }
      wgmma_commit();
    };
    const auto issue_pv = [&](int block) {
      const std::uint32_t v_base = smem_addr(sm.v + (block % STAGES) * T::kKvBytes);
#pragma unroll
      for (int kk = 0; kk < kBc / 16; ++kk) {
        // N-major V: 16 key rows (2048 bytes) per step, 64-column boxes kBc rows apart.
        const std::uint64_t db = smem_descriptor(v_base + kk * 16 * kRowBytes, kBc * kRowBytes,
                                                 8 * kRowBytes, Swizzle::k128B);
        const std::uint32_t a[4] = {p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3]};
        WgmmaRs<D, 1>::mma(o, a, db, 1);
      }
      wgmma_commit();
    };
    // S_j is done: K_j is free; mask, softmax; corr rescales what O held before.
    const auto softmax = [&](int j, int block, float(&corr)[2]) {
      pin(s);
      if (tid == 0) {
        mbarrier_arrive(&sm.k_empty[block % STAGES]);  // K_j may be refilled
        if (j == blocks - 1) mbarrier_arrive(sm.q_empty);  // Q's last use in the tile
      }
      const int col0 = j * kBc;
      const bool edge = col0 + kBc > pr.nkv;
      const bool diagonal = pr.causal && col0 + kBc - 1 > qb * kBr + (pr.nkv - pr.nq);
      if (edge || diagonal) {
#pragma unroll
        for (int i = 0; i < kBc / 2; ++i) {
          const int row = row0 + 8 * ((i / 2) % 2);
          const int col = col0 + 8 * (i / 4) + 2 * q4 + i % 2;
          if (col >= pr.nkv || (pr.causal && col > row + (pr.nkv - pr.nq))) s[i] = -INFINITY;
        }
      }
      if constexpr (MODE == kProductsOnly) {
        corr[0] = corr[1] = 1.0f;
        l[0] = l[1] = 1.0f;
      } else {
        softmax_row<kBc, 0>(s, m[0], l[0], corr[0], pr.scale_log2);
        softmax_row<kBc, 1>(s, m[1], l[1], corr[1], pr.scale_log2);
      }
    };
    const auto to_p = [&] {
#pragma unroll
      for (int i = 0; i < kBc / 4; ++i) p[i] = pack_half2(s[2 * i], s[2 * i + 1]);
    };
    const auto wait_k = [&](int block) {
      mbarrier_wait(&sm.k_full[block % STAGES], (block / STAGES) & 1);
    };
    const auto wait_v = [&](int block) {
      mbarrier_wait(&sm.v_full[block % STAGES], (block / STAGES) & 1);
    };
    const auto release_v = [&](int block) {
      if (tid == 0) mbarrier_arrive(&sm.v_empty[block % STAGES]);
    };
    if (blocks > 0) {
      // Block 0: S_0 alone (O is still zero).
      wait_k(it);
      named_barrier_sync(my_turn, 256);
      pin(s);
      wgmma_fence();
      if constexpr (MODE != kSoftmaxOnly) issue_s(it);
      named_barrier_arrive(their_turn, 256);
      wgmma_wait<0>();
      float corr[2];
      softmax(0, it, corr);
      to_p();
      // Blocks 1 ..: S_j with P_{j-1} V_{j-1}; the softmax of S_j while P_{j-1} V_{j-1} runs.
      for (int j = 1; j < blocks; ++j) {
        const int now = it + j;
        wait_k(now);
        wait_v(now - 1);
        named_barrier_sync(my_turn, 256);
        pin(s);
        pin(o);
        wgmma_fence();
        if constexpr (MODE != kSoftmaxOnly) {
          issue_s(now);
          issue_pv(now - 1);
        }
        named_barrier_arrive(their_turn, 256);
        wgmma_wait<1>();  // S_j is done
        softmax(j, now, corr);
        wgmma_wait<0>();  // P_{j-1} V_{j-1} is done: its V is free, p may be rewritten
        pin(o);
        release_v(now - 1);
#pragma unroll
        for (int i = 0; i < D / 2; ++i) o[i] *= corr[(i / 2) % 2];
        to_p();
      }
      // The last P V.
      wait_v(it + blocks - 1);
      named_barrier_sync(my_turn, 256);
      pin(o);
      wgmma_fence();
      if constexpr (MODE != kSoftmaxOnly) issue_pv(it + blocks - 1);
      named_barrier_arrive(their_turn, 256);
      wgmma_wait<0>();
      pin(o);
      release_v(it + blocks - 1);
    }
    it += blocks;
    if (blocks > 0) ++used_q;

    // Epilogue: O / l into the staging buffer (once the last tile's store has read it), TMA
    // store of 64-column boxes; L = (m + log2 l) ln 2 by the quad's first lane.
    float inv[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float sum = quad_sum(l[r]);
      inv[r] = sum > 0.0f ? 1.0f / sum : 0.0f;
      const int row = row0 + 8 * r;
      if (q4 == 0 && row < pr.nq) {
        lse[static_cast<long long>(head) * pr.nq + row] =
            sum > 0.0f ? (m[r] + log2f(sum)) * 0.69314718055994531f : -INFINITY;
      }
    }
    if (tid == 0) bulk_wait_read<0>();
    named_barrier_sync(kEpilogueBarrier + cw, 128);
#pragma unroll
    for (int i = 0; i < D / 2; i += 2) {
      const int row = 16 * warp + g + 8 * ((i / 2) % 2);
      const int col = 8 * (i / 4) + 2 * q4;
      const int chunk = ((col % 64) / 8) ^ (row % 8);  // the 128-byte swizzle
      unsigned char* dst =
          staging + (col / 64) * 64 * kRowBytes + row * kRowBytes + chunk * 16 + (col % 8) * 2;
      const float f = inv[(i / 2) % 2];
      *reinterpret_cast<std::uint32_t*>(dst) = pack_half2(o[i] * f, o[i + 1] * f);
    }
    fence_proxy_async();
    named_barrier_sync(kEpilogueBarrier + cw, 128);
    if (tid == 0) {
#pragma unroll
      for (int c = 0; c < T::kChunks; ++c) {
        tma_store_3d(&map_o, staging + c * 64 * kRowBytes, 64 * c, qb * kBr + cw * 64, head);
      }
      bulk_commit();
    }
  }
  // Consumer 1's first arrival is still owed to consumer 0: take it, so no barrier is left open.
  if (cw == 0) named_barrier_sync(my_turn, 256);
  if (tid == 0) bulk_wait<0>();
}

template <int D, int STAGES, int MODE>
__global__ void __launch_bounds__(kThreads, 1)
    flash3_fwd_kernel(const __grid_constant__ CUtensorMap map_q,
                      const __grid_constant__ CUtensorMap map_k,
                      const __grid_constant__ CUtensorMap map_v,
                      const __grid_constant__ CUtensorMap map_o, float* lse, Problem pr,
                      unsigned long long* probe) {
  extern __shared__ unsigned char smem_raw[];
  const Smem<D, STAGES> sm(smem_raw);
  if (threadIdx.x == 0) {
    mbarrier_init(sm.q_full, 1);
    mbarrier_init(sm.q_empty, 2);
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(&sm.k_full[s], 1);
      mbarrier_init(&sm.v_full[s], 1);
      mbarrier_init(&sm.k_empty[s], 2);  // one arrival per consumer warpgroup
      mbarrier_init(&sm.v_empty[s], 2);
    }
    mbarrier_init_fence();
  }
  __syncthreads();
  const bool probing = probe != nullptr && blockIdx.x == 0 && threadIdx.x == 128;
  if (probing) {
    probe[0] = clock64();
    probe[1] = ubench::global_timer_ns();
  }
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) produce(map_q, map_k, map_v, sm, pr);
  } else {
    setmaxnreg_inc<kConsumerRegisters>();
    consume<D, STAGES, MODE>(map_o, lse, sm, pr, wg - 1);
    if (probing) {
      probe[2] = clock64();
      probe[3] = ubench::global_timer_ns();
    }
  }
}

// ---- host -------------------------------------------------------------------------------------

struct Shape {
  int batch, heads, kv_heads, nq, nkv, d, causal;
  long long bh() const { return (long long)batch * heads; }
  long long bhkv() const { return (long long)batch * kv_heads; }
};

struct KernelConfig {
  const char* name;
  int d, stages;
  void (*kernel)(CUtensorMap, CUtensorMap, CUtensorMap, CUtensorMap, float*, Problem,
                 unsigned long long*);
  int smem;
};
template <int D, int STAGES, int MODE = kFull>
KernelConfig config(const char* name) {
  return {name, D, STAGES, flash3_fwd_kernel<D, STAGES, MODE>, Fa3<D, STAGES>::kSmemBytes};
}
const KernelConfig kConfigs[] = {config<64, 4>("flash3_fwd_d64_s4"),
                                 config<128, 2>("flash3_fwd_d128_s2")};
/// [mode - 1][d == 128]: the halves alone.
const KernelConfig kVariants[2][2] = {{config<64, 4, kProductsOnly>("flash3_products_d64_s4"),
                                       config<128, 2, kProductsOnly>("flash3_products_d128_s2")},
                                      {config<64, 4, kSoftmaxOnly>("flash3_softmax_d64_s4"),
                                       config<128, 2, kSoftmaxOnly>("flash3_softmax_d128_s2")}};
int g_mode = kFull;  // what launch() runs (--variants sets it per timing)
const KernelConfig& config_for(int d) {
  return g_mode == kFull ? kConfigs[d == 128] : kVariants[g_mode - 1][d == 128];
}

int g_sms = 0;  // the SMs the persistent grid is sized for (a green context's, with --sms)
unsigned long long* g_probe = nullptr;
bool g_probe_on = true;  // off under --profile: its 128 bytes of stores show in ncu
cudaStream_t g_stream = nullptr;

struct Buffers {
  __half *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
  float* l = nullptr;
  size_t nq = 0, nkv = 0, nl = 0;
};

Buffers alloc(const Shape& s, unsigned seed) {
  Buffers b;
  b.nq = size_t(s.bh()) * s.nq * s.d;
  b.nkv = size_t(s.bhkv()) * s.nkv * s.d;
  b.nl = size_t(s.bh()) * s.nq;
  UB_CHECK(cudaMalloc(&b.q, b.nq * 2));
  UB_CHECK(cudaMalloc(&b.k, b.nkv * 2));
  UB_CHECK(cudaMalloc(&b.v, b.nkv * 2));
  UB_CHECK(cudaMalloc(&b.o, b.nq * 2));
  UB_CHECK(cudaMalloc(&b.l, b.nl * 4));
  fill_random<<<1024, 256, 0, g_stream>>>(b.q, b.nq, seed, 2.0f);
  fill_random<<<1024, 256, 0, g_stream>>>(b.k, b.nkv, seed * 7 + 1, 1.0f);
  fill_random<<<1024, 256, 0, g_stream>>>(b.v, b.nkv, seed * 13 + 5, 1.0f);
  UB_CHECK_LAUNCH("fill_random");
  return b;
}
void release(Buffers& b) {
  UB_CHECK(cudaFree(b.q));
  UB_CHECK(cudaFree(b.k));
  UB_CHECK(cudaFree(b.v));
  UB_CHECK(cudaFree(b.o));
  UB_CHECK(cudaFree(b.l));
}

Problem problem_of(const Shape& s) {
  return {int(s.bh()), s.heads / s.kv_heads,
          s.nq,        s.nkv,
          s.causal,    float(1.4426950408889634 / std::sqrt(double(s.d)))};
}

void launch(const Shape& s, const Buffers& b) {
  const KernelConfig& cfg = config_for(s.d);
  const CUtensorMap mq = make_map(b.q, s.d, s.nq, int(s.bh()), 64, kBr);
  const CUtensorMap mk = make_map(b.k, s.d, s.nkv, int(s.bhkv()), 64, kBc);
  const CUtensorMap mv = make_map(b.v, s.d, s.nkv, int(s.bhkv()), 64, kBc);
  const CUtensorMap mo = make_map(b.o, s.d, s.nq, int(s.bh()), 64, 64);
  const Problem pr = problem_of(s);
  const int grid = std::min(pr.tiles(), g_sms);
  cfg.kernel<<<grid, kThreads, cfg.smem, g_stream>>>(mq, mk, mv, mo, b.l, pr,
                                                     g_probe_on ? g_probe : nullptr);
  UB_CHECK_LAUNCH(cfg.name);
}

/// O and L against a double-precision softmax over the visible keys of every row.
bool check_cpu(const Shape& s) {
  Buffers b = alloc(s, 4242u + s.nq + 3 * s.nkv + s.d);
  UB_CHECK(cudaMemsetAsync(b.o, 0xFF, b.nq * 2, g_stream));  // NaN poison
  UB_CHECK(cudaMemsetAsync(b.l, 0xFF, b.nl * 4, g_stream));
  launch(s, b);
  UB_CHECK(cudaStreamSynchronize(g_stream));
  const auto q = download(b.q, b.nq, g_stream), k = download(b.k, b.nkv, g_stream),
             v = download(b.v, b.nkv, g_stream), o = download(b.o, b.nq, g_stream);
  const auto l = download(b.l, b.nl, g_stream);
  const double scale = 1.0 / std::sqrt(double(s.d));
  double e2 = 0, r2 = 0, lse_err = 0;
  long long bad = 0;
  std::vector<double> p(s.nkv);
  for (long long h = 0; h < s.bh(); ++h) {
    const long long kvh = h / (s.heads / s.kv_heads);
    for (int i = 0; i < s.nq; ++i) {
      const int last = s.causal ? std::min(s.nkv - 1, i + s.nkv - s.nq) : s.nkv - 1;
      double mx = -INFINITY;
      for (int j = 0; j <= last; ++j) {
        double dot = 0;
        for (int c = 0; c < s.d; ++c) {
          dot += double(__half2float(q[(h * s.nq + i) * s.d + c])) *
                 double(__half2float(k[(kvh * s.nkv + j) * s.d + c]));
        }
        p[j] = dot * scale;
        mx = std::max(mx, p[j]);
      }
      double sum = 0;
      for (int j = 0; j <= last; ++j) sum += (p[j] = std::exp(p[j] - mx));
      const double ref_l = last < 0 ? -INFINITY : mx + std::log(sum);
      const double got_l = l[h * s.nq + i];
      if (std::isnan(got_l) || (std::isinf(ref_l) != std::isinf(got_l)))
        ++bad;
      else if (!std::isinf(ref_l))
        lse_err = std::max(lse_err, std::fabs(got_l - ref_l));
      for (int c = 0; c < s.d; ++c) {
        double ref = 0;
        for (int j = 0; j <= last; ++j)
          ref += p[j] / sum * double(__half2float(v[(kvh * s.nkv + j) * s.d + c]));
        const double got = __half2float(o[(h * s.nq + i) * s.d + c]);
        if (!std::isfinite(got)) ++bad;
        e2 += (got - ref) * (got - ref);
        r2 += ref * ref;
      }
    }
  }
  const double e = r2 > 0 ? std::sqrt(e2 / r2) : std::sqrt(e2);
  const bool ok = bad == 0 && e < 2e-3 && lse_err < 1e-3;
  std::fprintf(stderr,
               "check-cpu %s b=%d h=%d hkv=%d nq=%d nkv=%d causal=%d: O rel_err %.3e, L max abs "
               "err %.3e, unwritten/wrong-inf %lld: %s\n",
               config_for(s.d).name, s.batch, s.heads, s.kv_heads, s.nq, s.nkv, s.causal, e,
               lse_err, bad, ok ? "pass" : "FAIL");
  release(b);
  return ok;
}

/// Median of `reps` launches after 3 warm-ups, each after a flush of the L2 (a write of a buffer
/// of four times its size); reps 0: one untimed launch (for ncu).
double median_ms(const Shape& s, const Buffers& b, int reps, void* flush, size_t flush_bytes) {
  if (reps == 0) {
    launch(s, b);
    UB_CHECK(cudaStreamSynchronize(g_stream));
    return 0.0;
  }
  cudaEvent_t e0, e1;
  UB_CHECK(cudaEventCreate(&e0));
  UB_CHECK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int i = 0; i < 3 + reps; ++i) {
    UB_CHECK(cudaMemsetAsync(flush, i & 0xFF, flush_bytes, g_stream));
    UB_CHECK(cudaEventRecord(e0, g_stream));
    launch(s, b);
    UB_CHECK(cudaEventRecord(e1, g_stream));
    UB_CHECK(cudaEventSynchronize(e1));
    float x = 0;
    UB_CHECK(cudaEventElapsedTime(&x, e0, e1));
    if (i >= 3) ms.push_back(x);
  }
  UB_CHECK(cudaEventDestroy(e0));
  UB_CHECK(cudaEventDestroy(e1));
  return ubench::median(ms);
}

/// FlashAttention's FLOP convention: 4 Nq Nkv d per head, half of it when causal.
double flops(const Shape& s) {
  return 4.0 * double(s.bh()) * s.nq * double(s.nkv) * s.d / (s.causal ? 2.0 : 1.0);
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(
      stderr,
      "flash3_attention: %s\nusage: flash3_attention [--quick | --profile | --smcount | --variants | "
      "--list] [--case B,H,Hkv,N,Nkv,d,causal] [--sms N]\n",
      why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, profile = false, smcount = false, list = false, variants = false;
  int sms = 0;
  std::vector<Shape> one;  // --case: these shapes instead of a list's
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick")
      quick = true;
    else if (a == "--profile")
      profile = true;
    else if (a == "--smcount")
      smcount = true;
    else if (a == "--list")
      list = true;
    else if (a == "--variants")
      variants = true;
    else if (a == "--case" && i + 1 < argc) {
      Shape c{};
      if (std::sscanf(argv[++i], "%d,%d,%d,%d,%d,%d,%d", &c.batch, &c.heads, &c.kv_heads, &c.nq,
                      &c.nkv, &c.d, &c.causal) != 7 ||
          (c.d != 64 && c.d != 128) || c.heads % c.kv_heads != 0)
        usage("--case B,H,Hkv,N,Nkv,d,causal (d 64 or 128, H a multiple of Hkv)");
      one.push_back(c);
    } else if (a == "--sms" && i + 1 < argc)
      sms = std::atoi(argv[++i]);
    else
      usage(("unknown argument " + a).c_str());
  }

  // The sweep: FlashAttention-3's benchmark shapes (16k tokens a batch, a model width of 2048:
  // heads = 2048 / d), both head sizes, causal or not; and grouped-query heads (8 K/V heads).
  std::vector<Shape> cases;
  if (!one.empty()) {
    cases = one;
  } else if (variants) {
    cases = {{2, 16, 16, 8192, 8192, 128, 0},
             {2, 16, 16, 8192, 8192, 128, 1},
             {4, 32, 32, 4096, 4096, 64, 0}};
  } else if (smcount) {
    for (int causal : {0, 1}) cases.push_back({2, 16, 16, 8192, 8192, 128, causal});
    cases.push_back({4, 32, 32, 4096, 4096, 64, 0});
  } else if (quick) {
    cases = {{2, 16, 16, 8192, 8192, 128, 0}, {4, 32, 32, 4096, 4096, 64, 1}};
  } else if (profile) {
    cases = {{2, 16, 16, 8192, 8192, 128, 0},
             {2, 16, 16, 8192, 8192, 128, 1},
             {4, 32, 32, 4096, 4096, 64, 0},
             {4, 32, 8, 4096, 4096, 64, 1}};
  } else {
    for (int d : {64, 128}) {
      for (int causal : {0, 1}) {
        for (int n : {512, 1024, 2048, 4096, 8192, 16384}) {
          cases.push_back({16384 / n, 2048 / d, 2048 / d, n, n, d, causal});
        }
      }
    }
    for (int causal : {0, 1}) cases.push_back({2, 32, 8, 8192, 8192, 64, causal});
    cases.push_back({2, 16, 4, 8192, 8192, 128, 1});
  }
  if (list) {
    std::printf("batch,heads,kv_heads,seq,seq_kv,head_dim,causal\n");
    for (const Shape& s : cases)
      std::printf("%d,%d,%d,%d,%d,%d,%d\n", s.batch, s.heads, s.kv_heads, s.nq, s.nkv, s.d,
                  s.causal);
    return 0;
  }

  cudaDeviceProp prop{};
  UB_CHECK(cudaGetDeviceProperties(&prop, 0));
  UB_REQUIRE(prop.major == 9 && prop.minor == 0, "wgmma needs a compute capability 9.0 GPU");
  g_sms = prop.multiProcessorCount;
  const auto green = green_context(sms, g_stream, g_sms);
  UB_CHECK(cudaMalloc(&g_probe, 4 * sizeof(unsigned long long)));
  g_probe_on = !profile;
  for (const KernelConfig& cfg : {kConfigs[0], kConfigs[1], kVariants[0][0], kVariants[0][1],
                                  kVariants[1][0], kVariants[1][1]}) {
    UB_CHECK(
        cudaFuncSetAttribute(cfg.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, cfg.smem));
  }

  bool ok = true;
  const Shape checks[] = {
      {1, 2, 2, 200, 200, 64, 0},  {1, 2, 2, 200, 200, 64, 1},    {1, 2, 2, 333, 333, 128, 0},
      {1, 2, 2, 333, 333, 128, 1}, {2, 4, 2, 256, 256, 64, 1},    {1, 4, 1, 130, 130, 128, 1},
      {1, 2, 2, 100, 300, 64, 1},  {1, 2, 2, 300, 100, 128, 1},   {1, 2, 2, 1, 700, 128, 0},
      {1, 8, 2, 1, 513, 64, 1},    {1, 2, 2, 1024, 1024, 128, 1}, {1, 3, 3, 384, 512, 64, 0}};
  if (!profile && !smcount && !variants) {  // ncu profiles every launch: only the cases there
    for (const Shape& s : checks) ok &= check_cpu(s);
  }

  const size_t flush_bytes = 4 * size_t(prop.l2CacheSize);
  void* flush = nullptr;
  UB_CHECK(cudaMalloc(&flush, flush_bytes));
  std::printf("batch,heads,kv_heads,seq,seq_kv,head_dim,causal,kernel,sms,ms,tflops,sm_mhz\n");
  for (const Shape& s : cases) {
    Buffers b = alloc(s, 99u + s.nq + s.d);
    const int reps = profile ? 0 : quick || smcount || variants ? 5 : 20;
    // --variants: the forward, then its products alone, then its softmax alone.
    for (int mode = kFull; mode <= (variants ? kSoftmaxOnly : kFull); ++mode) {
      g_mode = mode;
      const double ms = median_ms(s, b, reps, flush, flush_bytes);
      const double mhz = reps > 0 ? probe_mhz(g_probe, g_stream) : 0.0;
      std::printf("%d,%d,%d,%d,%d,%d,%d,%s,%d,%.5f,%.1f,%.0f\n", s.batch, s.heads, s.kv_heads, s.nq,
                  s.nkv, s.d, s.causal, config_for(s.d).name, g_sms, ms,
                  reps > 0 ? flops(s) / ms * 1e-9 : 0.0, mhz);
      std::fflush(stdout);
    }
    g_mode = kFull;
    release(b);
  }
  UB_CHECK(cudaFree(flush));
  UB_CHECK(cudaFree(g_probe));
  std::fprintf(stderr, ok ? "all checks passed\n" : "SOME CHECKS FAILED\n");
  return ok ? 0 : 1;
}
