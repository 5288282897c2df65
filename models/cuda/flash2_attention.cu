#include "models/cuda/flash2_attention.h"

#include <cstdint>
#include <string>

#include "models/cuda/cuda_check.h"
#include "models/cuda/device_primitives.cuh"
#include "sim/core/error.h"

namespace memwall::cuda {
namespace {

constexpr int kFlashThreads = 128;  // 4 warps
constexpr float kLn2 = 0.6931471805599453f;

/// flash2_fwd: one CTA per (bh, i), CTA index bh·⌈N/BR⌉ + i. Warp w owns query rows
/// w·BR/4 … (w+1)·BR/4 − 1 of the block (BR/64 m16 tiles). Scores are kept in the log2 domain:
/// scale_log2 = scale·log2(e), so exp2 of a scaled score is exp of scale·QKᵀ.
template <int D, int BR, int BC, int STAGES>
__global__ void __launch_bounds__(kFlashThreads)
    flash2_fwd_kernel(const half* __restrict__ q, const half* __restrict__ k,
                      const half* __restrict__ v, half* __restrict__ o, float* __restrict__ l,
                      int n, float scale_log2) {
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

  const int blocks_q = (n + BR - 1) / BR;
  const int blocks_kv = (n + BC - 1) / BC;
  const long long bh = blockIdx.x / blocks_q;
  const int row0 = static_cast<int>(blockIdx.x % blocks_q) * BR;
  const int rows = min(BR, n - row0);
  const half* kg = k + bh * n * D;
  const half* vg = v + bh * n * D;

  auto load_kv = [&](int j) {
    const int stage = j % STAGES;
    const int k0 = j * BC;
    const int kv_rows = min(BC, n - k0);
    load_tile_rows<BC, D, kFlashThreads>(sk + stage * BC * D, kg + static_cast<long long>(k0) * D,
                                         kv_rows, D);
    load_tile_rows<BC, D, kFlashThreads>(sv + stage * BC * D, vg + static_cast<long long>(k0) * D,
                                         kv_rows, D);
  };

  // Group 0 holds Q and K/V block 0; groups 1 … STAGES−1 hold the next blocks.
  load_tile_rows<BR, D, kFlashThreads>(sq, q + (bh * n + row0) * D, rows, D);
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
    const int kv_valid = n - j * BC;
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
          const float correction = exp2f(row_max[mt][h] - new_max);
          row_max[mt][h] = new_max;
          float sum = 0.0f;
#pragma unroll
          for (int nt = 0; nt < kSubNt; ++nt) {
            const float p0 = exp2f(acc_s[mt][nt][2 * h] * scale_log2 - new_max);
            const float p1 = exp2f(acc_s[mt][nt][2 * h + 1] * scale_log2 - new_max);
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
  // L = logsumexp of the scaled scores in natural log.
#pragma unroll
  for (int mt = 0; mt < kMt; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float sum = row_sum[mt][h];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const float inv = 1.0f / sum;
      const int r = warp_row0 + mt * 16 + g + 8 * h;
#pragma unroll
      for (int dt = 0; dt < kDt; ++dt) {
        store_half2<D>(sq, r, dt * 8 + 2 * t, acc_o[mt][dt][2 * h] * inv,
                       acc_o[mt][dt][2 * h + 1] * inv);
      }
      if (t == 0 && r < rows) {
        l[bh * n + row0 + r] = row_max[mt][h] * kLn2 + logf(sum);
      }
    }
  }
  __syncthreads();
  store_tile_box<BR, D, kFlashThreads>(o + (bh * n + row0) * D, sq, rows, D, D);
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

using Launcher = void (*)(const AttentionShape&, const half*, const half*, const half*, half*,
                          float*, float, cudaStream_t);

struct Entry {
  Flash2Variant variant;
  Launcher launcher;
};

/// The instantiated variants. The contract's defaults are (128, 128) for d = 64 and (128, 64)
/// for d = 128, stages 2.
const Entry kEntries[] = {
    {{64, 128, 128, 2}, launch_variant<64, 128, 128, 2>},
    {{64, 128, 64, 2}, launch_variant<64, 128, 64, 2>},
    {{64, 64, 64, 2}, launch_variant<64, 64, 64, 2>},
    {{64, 64, 128, 2}, launch_variant<64, 64, 128, 2>},
    {{64, 64, 64, 3}, launch_variant<64, 64, 64, 3>},
    {{128, 128, 64, 2}, launch_variant<128, 128, 64, 2>},
    {{128, 64, 64, 2}, launch_variant<128, 64, 64, 2>},
    {{128, 64, 128, 2}, launch_variant<128, 64, 128, 2>},
    {{128, 128, 32, 2}, launch_variant<128, 128, 32, 2>},
    {{128, 64, 64, 3}, launch_variant<128, 64, 64, 3>},
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

void check_flash2_supported(const AttentionShape& shape, const Flash2Blocks& blocks) {
  if (find_entry(shape.head_dim, blocks) == nullptr) {
    std::string list;
    for (const Entry& e : kEntries) {
      list += (list.empty() ? "" : ", ") + std::string("(") + std::to_string(e.variant.head_dim) +
              "," + std::to_string(e.variant.block_q) + "," + std::to_string(e.variant.block_kv) +
              "," + std::to_string(e.variant.stages) + ")";
    }
    throw UsageError("flash2: no kernel for head_dim=" + std::to_string(shape.head_dim) +
                     " block_q=" + std::to_string(blocks.block_q) +
                     " block_kv=" + std::to_string(blocks.block_kv) +
                     " stages=" + std::to_string(blocks.stages) +
                     "; instantiated (head_dim,block_q,block_kv,stages): " + list);
  }
  if (shape.seq <= 0 || shape.seq % 8 != 0) {
    throw UsageError("flash2: seq must be a positive multiple of 8 (16-byte rows), got " +
                     std::to_string(shape.seq));
  }
  if (shape.batch <= 0 || shape.heads <= 0) {
    throw UsageError("flash2: batch and heads must be positive");
  }
}

void launch_flash2_fwd(const AttentionShape& shape, const Flash2Blocks& blocks, const half* q,
                       const half* k, const half* v, half* o, float* l, float scale,
                       cudaStream_t stream) {
  check_flash2_supported(shape, blocks);
  find_entry(shape.head_dim, blocks)->launcher(shape, q, k, v, o, l, scale, stream);
}

}  // namespace memwall::cuda
