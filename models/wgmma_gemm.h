#pragma once
/// The Hopper-native GEMM kernel of models/cuda/hopper/wgmma_gemm.cu as an op stream, box for
/// box: what `--gemm wgmma` runs for the gemm workload and for naive attention's qk and pv.
///
/// The kernel: a persistent grid of min(tiles, SMs) CTAs of 384 threads (one producer and two
/// consumer warpgroups), CTA c taking tiles c, c + grid, ... in a grouped order (8 M-tiles per
/// group, within a batch). Per tile and K-tile of 64 elements, TMA loads an A box (bm × 64) and
/// the B box(es) (bn × 64: one K-major box, or bn / 64 N-major boxes of 64 k-rows × 64 columns)
/// into one of `stages` shared-memory stages; the consumers' wgmmas take 2·bm·bn·64 FLOPs on the
/// tensor pipe; a stage is refilled once the wgmmas of the K-tile after it have been issued and
/// those of its own are done (wait_group 1). Per tile, the consumers write their accumulators
/// into a staging buffer (bm·bn elements through shared memory) and TMA stores them as boxes of
/// bm/2 rows × 64 columns, which the next tile's loads and wgmmas overlap.
///
/// The op stream follows that in one sequence per CTA: the producer's run-ahead is the `stages`
/// loads in flight, each stage's tag 1 + (K-tile index mod stages); a tile's stores carry tag
/// stages + 1, which the next tile's epilogue waits for before it writes the staging buffer again
/// (the kernel's cp.async.bulk.wait_group.read 0), so a tile's store overlaps the next tile's
/// mainloop but not its epilogue.

#include <algorithm>
#include <cstdint>

#include "models/backend.h"
#include "models/workload_params.h"
#include "traces/op.h"
#include "traces/recorder.h"

namespace memwall {

inline constexpr std::uint64_t kWgmmaTileK = 64;  ///< K elements per stage (one 128-byte row)
inline constexpr std::uint32_t kWgmmaThreads = 384;  ///< producer + two consumer warpgroups
/// ptxas's registers per thread at entry (__launch_bounds__(384, 1); setmaxnreg then moves them
/// between warpgroups): every instantiation (traces/measured/h200-hopper-gemm/log.txt).
inline constexpr std::uint32_t kWgmmaRegisters = 168;
inline constexpr std::uint64_t kWgmmaGroupM = 8;  ///< M-tiles per group of the tile order
inline constexpr std::uint32_t kWgmmaMaxStages = 4;

/// The shared memory of a bm × bn CTA with `stages` stages: the operand boxes, the output
/// staging buffer, 1 KiB of alignment slack and the barriers (as the kernel allocates it).
std::uint64_t wgmma_smem_bytes(std::uint64_t bm, std::uint64_t bn, std::uint64_t stages,
                               std::uint32_t element_bytes);
/// The stages the kernel gives a bm × bn tile: as many as fit `smem_limit` (a config's
/// smem_per_block; 227 KiB when 0), at most kWgmmaMaxStages; 0 when not even 2 fit.
std::uint32_t wgmma_stages(std::uint64_t bm, std::uint64_t bn, std::uint32_t element_bytes,
                           std::uint64_t smem_limit);
/// Throws UsageError unless bm is 128 or 256 and bn 64, 128 or 256 (the wgmma tile shapes the
/// kernel's two consumer warpgroups and m64nNk16 allow), naming `bm_name` and `bn_name`.
void check_wgmma_tile(std::uint64_t bm, std::uint64_t bn, const char* bm_name, const char* bn_name);

/// Throws UsageError unless `p.arch` is at least kWgmmaMinArch: `what` ("--gemm wgmma", "flash3")
/// runs on wgmma and TMA.
void check_wgmma_arch(const WorkloadParams& p, const char* what);

struct WgmmaGemm;
/// Throws UsageError unless the kernel can run `g` for `p`: fp16, and two stages fit (size_for).
void check_wgmma_runs(const WgmmaGemm& g, const WorkloadParams& p);

/// One batched product run by the kernel: C[z] (m × n) = A[z] (m × k) · B[z]ᵀ with B[z] n × k
/// (K-major), or · B[z] with B[z] k × n (N-major). Each operand is a 2-D tensor whose batch z
/// starts at row z·rows; B's at row (z / b_group)·rows (the query heads of one K/V head share it).
struct WgmmaGemm {
  std::uint8_t a = 0, b = 0, c = 0;  ///< tensor ids
  std::uint64_t batch = 1, m = 0, n = 0, k = 0;
  bool b_n_major = false;
  std::uint64_t b_group = 1;
  std::uint64_t bm = 128, bn = 128, stages = 4;
  std::uint32_t element_bytes = 2;

  std::uint64_t tiles_m() const { return ceil_div(m, bm); }
  std::uint64_t tiles_n() const { return ceil_div(n, bn); }
  std::uint64_t tiles() const { return batch * tiles_m() * tiles_n(); }
  /// The first row of batch z's B (its K/V head's, with b_group query heads per K/V head).
  std::uint64_t b_row(std::uint64_t z) const { return (z / b_group) * (b_n_major ? k : n); }
  /// Takes `p`'s element size and the stages the kernel gives this tile under `p`'s per-block
  /// shared-memory limit (0 when two do not fit: check_wgmma_runs says so).
  void size_for(const WorkloadParams& p) {
    element_bytes = p.element_size();
    stages = wgmma_stages(bm, bn, element_bytes, p.smem_limit_bytes.value_or(0));
  }
  /// The persistent grid on `sm_count` SMs.
  std::uint64_t grid(std::uint32_t sm_count) const {
    return std::min<std::uint64_t>(tiles(), sm_count);
  }
  /// The launch: grid, 384 threads, the smem of its stages, ptxas's registers.
  KernelInfo launch(const char* name, std::uint32_t sm_count) const;

  struct Tile {
    std::uint64_t z, m0, n0;
  };
  /// Tile t in the kernel's grouped order.
  Tile tile(std::uint64_t t) const {
    const std::uint64_t tm = tiles_m(), tn = tiles_n(), per_batch = tm * tn;
    const std::uint64_t z = t / per_batch, local = t % per_batch;
    const std::uint64_t first_m = (local / (kWgmmaGroupM * tn)) * kWgmmaGroupM;
    const std::uint64_t group_m = std::min(kWgmmaGroupM, tm - first_m);
    const std::uint64_t in_group = local % (kWgmmaGroupM * tn);
    return {z, (first_m + in_group % group_m) * bm, (in_group / group_m) * bn};
  }
};

/// The ops (and on an EigenBackend the numbers) of persistent CTA `cta` of a grid of `grid`.
/// `box(id, row, rows, col, cols)` makes a tensor's box (the workload's Workload::box);
/// `alpha` scales C (qk's 1/√d), with one fp32 op per element when it is not 1.
template <class Backend, class BoxFn>
void wgmma_gemm_cta(const WgmmaGemm& g, std::uint64_t cta, std::uint64_t grid, double alpha,
                    BoxFn&& box, Backend& be, Recorder& rec) {
  const std::uint64_t s = g.element_bytes, k_tiles = ceil_div(g.k, kWgmmaTileK);
  const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
  using Tile = WgmmaGemm::Tile;
  const auto tag = [&](std::uint64_t it) { return static_cast<std::uint16_t>(1 + it % g.stages); };
  const auto store_tag = static_cast<std::uint16_t>(g.stages + 1);
  // The K-tiles of this CTA's tiles, in order: it = (tile's place among this CTA's) · k_tiles + kt.
  const std::uint64_t my_tiles = cta < g.tiles() ? ceil_div(g.tiles() - cta, grid) : 0;
  const std::uint64_t total = my_tiles * k_tiles;
  const auto issue = [&](std::uint64_t it) {
    const Tile t = g.tile(cta + (it / k_tiles) * grid);
    const std::uint64_t k0 = (it % k_tiles) * kWgmmaTileK, kw = std::min(kWgmmaTileK, g.k - k0);
    const std::uint64_t rows = std::min(g.bm, g.m - t.m0), cols = std::min(g.bn, g.n - t.n0);
    rec.load(g.a, box(g.a, t.z * g.m + t.m0, rows, k0, kw), tag(it));
    const std::uint64_t b_row = g.b_row(t.z);
    if (!g.b_n_major) {
      rec.load(g.b, box(g.b, b_row + t.n0, cols, k0, kw), tag(it));
    } else {
      for (std::uint64_t c0 = 0; c0 < cols; c0 += 64) {  // 64 columns (128 bytes) per box
        rec.load(g.b, box(g.b, b_row + k0, kw, t.n0 + c0, std::min<std::uint64_t>(64, cols - c0)),
                 tag(it));
      }
    }
  };
  for (std::uint64_t it = 0; it < std::min(total, g.stages); ++it) issue(it);
  std::uint64_t it = 0;
  for (std::uint64_t i = 0; i < my_tiles; ++i) {
    const Tile t = g.tile(cta + i * grid);
    const std::uint64_t rows = std::min(g.bm, g.m - t.m0), cols = std::min(g.bn, g.n - t.n0);
    const std::uint64_t b_row = g.b_row(t.z);
    EigenBackend::Matrix acc;
    if constexpr (Backend::kNumeric) acc = EigenBackend::Matrix::Zero(e(rows), e(cols));
    for (std::uint64_t kt = 0; kt < k_tiles; ++kt, ++it) {
      const std::uint64_t k0 = kt * kWgmmaTileK, kw = std::min(kWgmmaTileK, g.k - k0);
      rec.wait(tag(it));
      rec.compute(ComputeUnit::tensor, 2 * rows * cols * kw);
      if constexpr (Backend::kNumeric) {
        const auto a = be.t(g.a).block(e(t.z * g.m + t.m0), e(k0), e(rows), e(kw));
        if (g.b_n_major) {
          acc += a * be.t(g.b).block(e(b_row + k0), e(t.n0), e(kw), e(cols));
        } else {
          acc += a * be.t(g.b).block(e(b_row + t.n0), e(k0), e(cols), e(kw)).transpose();
        }
      }
      // wait_group 1: the previous K-tile's wgmmas are done and its stage is refilled.
      if (kt > 0 && it - 1 + g.stages < total) issue(it - 1 + g.stages);
    }
    if (it - 1 + g.stages < total) issue(it - 1 + g.stages);  // wait_group 0: the last one's
    // Epilogue: the previous tile's stores out of the staging buffer; scale, convert and stage
    // through shared memory (written, then read by the TMA store), one box per consumer
    // warpgroup and 64 columns.
    rec.wait(store_tag);
    if (alpha != 1.0) rec.compute(ComputeUnit::fp32, rows * cols);
    rec.smem(2 * rows * cols * s);
    if constexpr (Backend::kNumeric) {
      be.t(g.c).block(e(t.z * g.m + t.m0), e(t.n0), e(rows), e(cols)) = alpha * acc;
    }
    for (std::uint64_t r0 = 0; r0 < rows; r0 += g.bm / 2) {
      for (std::uint64_t c0 = 0; c0 < cols; c0 += 64) {
        rec.store(g.c,
                  box(g.c, t.z * g.m + t.m0 + r0, std::min(g.bm / 2, rows - r0), t.n0 + c0,
                      std::min<std::uint64_t>(64, cols - c0)),
                  store_tag);
      }
    }
  }
}

}  // namespace memwall
