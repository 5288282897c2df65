#include "models/flash3.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "models/attention_params.h"
#include "models/checked_bytes.h"
#include "models/launch.h"
#include "models/online_softmax.h"
#include "models/reference.h"
#include "models/wgmma_gemm.h"
#include "models/workload.h"
#include "models/workload_plugin.h"
#include "sim/core/error.h"
#include "sim/core/interrupt.h"

namespace memwall {
namespace {

constexpr std::uint64_t kBr = kFlash3BlockQ, kBc = kFlash3BlockKv;
constexpr std::uint64_t kWgRows = kBr / 2;  ///< query rows per consumer warpgroup
constexpr std::uint64_t kBoxCols = 64;  ///< columns per TMA box (one 128-byte swizzle row)
/// The kernel's alignment slack and barrier space (Fa3::kSmemBytes).
constexpr std::uint64_t kSmemSlack = 1024 + 256;

/// How resolved `p`'s kernel walks its tiles.
struct Flash3Grid {
  AttentionShape a;
  std::uint64_t tr = 1, tc = 1;  ///< Q blocks per head, K/V blocks per K/V head
  std::uint64_t stages = 2;

  explicit Flash3Grid(const WorkloadParams& p)
      : a(attention_shape(p)),
        tr(ceil_div(a.nq, kBr)),
        tc(ceil_div(a.nkv, kBc)),
        stages(*p.stages) {}

  std::uint64_t tiles() const { return a.batch_heads * tr; }
  std::uint64_t grid(std::uint32_t sm_count) const {
    return std::min<std::uint64_t>(tiles(), sm_count);
  }
  struct Tile {
    std::uint64_t head, qb;
  };
  /// Tile t: head by head, or (causal) the longest first across heads.
  Tile tile(std::uint64_t t) const {
    if (a.causal) return {t % a.batch_heads, tr - 1 - t / a.batch_heads};
    return {t / tr, t % tr};
  }
  std::uint64_t rows(std::uint64_t qb) const { return std::min(kBr, a.nq - qb * kBr); }
  /// K/V blocks Q block qb sees (at least one: a causal mask needs seq <= seq_kv).
  std::uint64_t blocks(std::uint64_t qb) const { return a.blocks_visible(qb * kBr, rows(qb), kBc); }
  /// Keys of K/V blocks [0, n).
  std::uint64_t keys(std::uint64_t n) const { return std::min(n * kBc, a.nkv); }
};

/// FlashAttention-3-style forward (see models/flash3.h): one persistent CTA's tiles.
class Flash3 final : public BackendWorkload<Flash3> {
 public:
  explicit Flash3(const WorkloadParams& p) : BackendWorkload(p), m_grid(p) {
    const AttentionShape& a = m_grid.a;
    const std::uint32_t s = p.element_size();
    m_q = add_input("Q", a.batch_heads * a.nq, p.head_dim, s);
    m_k = add_input("K", a.kv_batch_heads() * a.nkv, p.head_dim, s);
    m_v = add_input("V", a.kv_batch_heads() * a.nkv, p.head_dim, s);
    m_o = add_tensor("O", a.batch_heads * a.nq, p.head_dim, s);
    m_l = add_tensor("L", a.batch_heads, a.nq, 4);
  }

 private:
  friend class BackendWorkload<Flash3>;
  using Matrix = EigenBackend::Matrix;

  template <class Backend>
  void run(std::size_t kernel, std::uint64_t cta, Backend& be, Recorder& rec) const {
    if (kernel == 0) persistent(cta, be, rec);
  }

  /// The running state of one tile's numerics (an EigenBackend run only).
  struct TileMath {
    Matrix q, o;
    Eigen::VectorXd m, l;
  };

  template <class Backend>
  void persistent(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const WorkloadParams& p = params();
    const Flash3Grid& g = m_grid;
    const AttentionShape& a = g.a;
    const std::uint64_t d = p.head_dim, s = p.element_size(), stages = g.stages;
    const std::uint64_t grid = g.grid(p.sm_count);
    const std::uint64_t my_tiles = cta < g.tiles() ? ceil_div(g.tiles() - cta, grid) : 0;
    // Tags: the Q buffer; K and V of each stage; each consumer's S and P·V products
    // (asynchronous compute) and its O stores out of the staging buffer.
    constexpr std::uint16_t kQTag = 1;
    const auto k_tag = [&](std::uint64_t b) {
      return static_cast<std::uint16_t>(2 + 2 * (b % stages));
    };
    const auto v_tag = [&](std::uint64_t b) {
      return static_cast<std::uint16_t>(3 + 2 * (b % stages));
    };
    const auto s_tag = [&](int w) { return static_cast<std::uint16_t>(2 + 2 * stages + w); };
    const auto pv_tag = [&](int w) { return static_cast<std::uint16_t>(4 + 2 * stages + w); };
    const auto store_tag = [&](int w) { return static_cast<std::uint16_t>(6 + 2 * stages + w); };
    const auto x_tag = [&](int w) { return static_cast<std::uint16_t>(8 + 2 * stages + w); };

    // The producer's loads in its own order — per tile its Q, then K and V of each visible block
    // — each issued once the buffer it refills is released: Q once the tile before's last S
    // products are done, K (V) of block b once both consumers are done with K (V) of b − stages.
    // A cursor over that order: the CTA's tile, the place in it (0: Q; 1 + 2j: K_j; 2 + 2j: V_j)
    // and the CTA's K/V block counter.
    struct Cursor {
      std::uint64_t tile = 0, place = 0, block = 0, blocks = 0;
    } next;
    const auto blocks_of = [&](std::uint64_t i) { return g.blocks(g.tile(cta + i * grid).qb); };
    if (my_tiles > 0) next.blocks = blocks_of(0);
    std::uint64_t q_released = 0, k_released = 0, v_released = 0;
    const auto issue_ready = [&] {
      while (next.tile < my_tiles) {
        const bool q = next.place == 0, v = !q && next.place % 2 == 0;
        const std::uint64_t j = q ? 0 : (next.place - 1) / 2, b = next.block + j;
        const bool free = q   ? q_released >= next.tile
                          : v ? v_released + stages > b
                              : k_released + stages > b;
        if (!free) return;
        const Flash3Grid::Tile t = g.tile(cta + next.tile * grid);
        for (std::uint64_t c0 = 0; c0 < d; c0 += kBoxCols) {
          const std::uint64_t cols = std::min(kBoxCols, d - c0);
          if (q) {
            rec.load(m_q, box(m_q, t.head * a.nq + t.qb * kBr, g.rows(t.qb), c0, cols), kQTag);
          } else {
            const std::uint64_t k0 = j * kBc, keys = std::min(kBc, a.nkv - k0);
            const std::uint8_t id = v ? m_v : m_k;
            rec.load(id, box(id, a.kv_head(t.head) * a.nkv + k0, keys, c0, cols),
                     v ? v_tag(b) : k_tag(b));
          }
        }
        if (++next.place > 2 * next.blocks) {  // the tile's last V: on to the next tile
          next.block += next.blocks;
          next.place = 0;
          if (++next.tile < my_tiles) next.blocks = blocks_of(next.tile);
        }
      }
    };

    // The work of one consumer (64 rows) on a full block of 128 keys, valid or not: its
    // products, and its online softmax (scale, row max, subtract, exponentials and row sum;
    // the rescale of ℓ and O), as flash2's model counts it.
    const std::uint64_t product = 2 * kWgRows * kBc * d;
    // The softmax runs on the consumer's own warps while the CTA's other work goes on: all of it
    // asynchronous under the consumer's tag, its pipes booked at their rates and its chain of
    // dependent instructions taking kFlash3SoftmaxCycles however free they are.
    const auto softmax = [&](int w, bool masked) {
      rec.compute(ComputeUnit::latency, flash3_softmax_cycles(d), x_tag(w));
      if (masked) rec.compute(ComputeUnit::fp32, kWgRows * kBc, x_tag(w));
      rec.compute(ComputeUnit::fp32, 4 * kWgRows * kBc + kWgRows * d + 2 * kWgRows, x_tag(w));
      rec.compute(ComputeUnit::sfu, kWgRows * kBc + kWgRows, x_tag(w));
    };
    const auto epilogue = [&](int w, const Flash3Grid::Tile& t) {
      const std::uint64_t r0 = t.qb * kBr + w * kWgRows;
      const std::uint64_t rows = r0 < a.nq ? std::min(kWgRows, a.nq - r0) : 0;
      rec.compute(ComputeUnit::fp32, kWgRows * d + kWgRows);  // O / ℓ, L = m + log ℓ
      rec.compute(ComputeUnit::sfu, 2 * kWgRows);  // reciprocal and log per row
      rec.wait(store_tag(w));  // the last tile's store has read the staging buffer
      rec.smem(2 * kWgRows * d * s);  // written, then read by the TMA store
      if (rows == 0) return;  // rows past the sequence: the stores are clipped away
      for (std::uint64_t c0 = 0; c0 < d; c0 += kBoxCols) {
        rec.store(m_o, box(m_o, t.head * a.nq + r0, rows, c0, std::min(kBoxCols, d - c0)),
                  store_tag(w));
      }
      rec.store(m_l, box(m_l, t.head, 1, r0, rows));
    };

    issue_ready();
    std::uint64_t block = 0;  // the CTA's K/V block counter at the tile's first block
    for (std::uint64_t i = 0; i < my_tiles; ++i) {
      const Flash3Grid::Tile t = g.tile(cta + i * grid);
      const std::uint64_t n = g.blocks(t.qb), it = block;
      const std::uint64_t r0 = t.qb * kBr, rows = g.rows(t.qb);
      const auto masked = [&](std::uint64_t j) {
        return a.block_masked(r0, j * kBc, std::min(kBc, a.nkv - j * kBc));
      };
      rec.wait(kQTag);
      TileMath math;
      if constexpr (Backend::kNumeric) start_tile(be, t, rows, math);
      for (std::uint64_t j = 0; j <= n; ++j) {
        const std::uint64_t b = it + j;
        // Consumer 0's turn: S_j and P_{j-1}·V_{j-1}, once its softmax of S_{j-1} and (for the
        // rescale before P_{j-1} is packed) its P·V of the block before are done.
        if (j < n) rec.wait(k_tag(b));
        if (j > 0) {
          rec.wait(v_tag(b - 1));
          rec.wait(x_tag(0));
          rec.wait(pv_tag(0));
        }
        if (j < n) rec.compute(ComputeUnit::tensor, product, s_tag(0));
        if (j > 0) rec.compute(ComputeUnit::tensor, product, pv_tag(0));
        // Consumer 1's softmax of S_{j-1} (both consumers are done with K_{j-1}, and with Q after
        // the tile's last).
        if (j > 0) {
          rec.wait(s_tag(1));
          ++k_released;
          if (j == n) ++q_released;
          issue_ready();
          softmax(1, masked(j - 1));
        }
        // Consumer 0's softmax of S_j, while its P·V_{j-1} runs.
        if (j < n) {
          rec.wait(s_tag(0));
          softmax(0, masked(j));
          if constexpr (Backend::kNumeric) block_math(be, t, j, math);
        }
        // Consumer 1's turn, on the same terms (both consumers are then done with V_{j-2}).
        if (j > 0) {
          rec.wait(x_tag(1));
          if (j > 1) {
            rec.wait(pv_tag(1));
            ++v_released;
            issue_ready();
          }
        }
        if (j < n) rec.compute(ComputeUnit::tensor, product, s_tag(1));
        if (j > 0) rec.compute(ComputeUnit::tensor, product, pv_tag(1));
      }
      rec.wait(pv_tag(0));  // consumer 0's last P·V
      if constexpr (Backend::kNumeric) end_tile(be, t, rows, math);
      epilogue(0, t);
      rec.wait(pv_tag(1));  // consumer 1's last P·V: V of the tile's last block is free
      ++v_released;
      issue_ready();
      epilogue(1, t);
      block += n;
    }
  }

  template <class Backend>
  void start_tile(Backend& be, const Flash3Grid::Tile& t, std::uint64_t rows,
                  TileMath& math) const {
    const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
    const std::uint64_t d = params().head_dim;
    math.q = be.t(m_q).block(e(t.head * m_grid.a.nq + t.qb * kBr), 0, e(rows), e(d));
    math.o = Matrix::Zero(e(rows), e(d));
    math.m = Eigen::VectorXd::Constant(e(rows), -std::numeric_limits<double>::infinity());
    math.l = Eigen::VectorXd::Zero(e(rows));
  }

  /// Block j of the tile: S = scale·Q·Kᵀ, the mask, the online softmax and O += P·V.
  template <class Backend>
  void block_math(Backend& be, const Flash3Grid::Tile& t, std::uint64_t j, TileMath& math) const {
    throw_if_interrupted();  // a CTA's numerics can take seconds at large N: poll per block
    const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
    const AttentionShape& a = m_grid.a;
    const std::uint64_t d = params().head_dim, k0 = j * kBc, keys = std::min(kBc, a.nkv - k0);
    const std::uint64_t kv_row = a.kv_head(t.head) * a.nkv + k0;
    const Matrix kb = be.t(m_k).block(e(kv_row), 0, e(keys), e(d));
    const Matrix vb = be.t(m_v).block(e(kv_row), 0, e(keys), e(d));
    Matrix sc = (1.0 / std::sqrt(static_cast<double>(d))) * math.q * kb.transpose();
    mask_hidden_scores(sc, a, t.qb * kBr, k0);
    online_softmax_block(sc, math.m, math.l, math.o);
    math.o += sc * vb;
  }

  template <class Backend>
  void end_tile(Backend& be, const Flash3Grid::Tile& t, std::uint64_t rows, TileMath& math) const {
    const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
    const std::uint64_t r0 = t.qb * kBr, nq = m_grid.a.nq, d = params().head_dim;
    for (Eigen::Index r = 0; r < e(rows); ++r) {
      math.o.row(r) /= math.l(r);
      be.t(m_l)(e(t.head), e(r0) + r) = math.m(r) + std::log(math.l(r));
    }
    be.t(m_o).block(e(t.head * nq + r0), 0, e(rows), e(d)) = math.o;
  }

  Flash3Grid m_grid;
  std::uint8_t m_q = 0, m_k = 0, m_v = 0, m_o = 0, m_l = 0;
};

constexpr ParamSpec kParams[] = {
    kDtypeParam,
    kBatchParam,
    kHeadsParam,
    kSeqParam,
    kHeadDimParam,
    kKvHeadsParam,
    kSeqKvParam,
    kCausalParam,
    {.name = "stages",
     .flag = "--stages",
     .type = ParamType::kTile,
     .unit = "blocks",
     .help = "K/V buffers in shared memory, at least 2 (one filled while another is read); "
             "with Q and the O staging buffer they must fit smem_per_block",
     .default_text = "4 for head_dim 64, 2 for 128 (the kernel's instantiations)",
     .min = 2,
     .max = 64,
     .max_reason = "K/V buffers",
     .field = field_of<&WorkloadParams::stages>()},
    kSmemLimitParam,
};

class Flash3Plugin final : public WorkloadPlugin {
 public:
  std::string_view name() const override { return "flash3"; }
  std::string_view summary() const override {
    return "FlashAttention-3-style forward on Hopper: a persistent grid (one CTA per SM), a TMA "
           "producer warpgroup and two wgmma consumer warpgroups taking turns (pingpong), "
           "128 × 128 tiles, `stages` K/V buffers; causal and grouped-query";
  }
  std::span<const ParamSpec> params() const override { return kParams; }

  void resolve(WorkloadParams& p) const override {
    check_wgmma_arch(p, "flash3");
    if (p.dtype != Dtype::fp16) throw UsageError("flash3: the kernel is fp16 only (--dtype fp16)");
    if (p.head_dim != 64 && p.head_dim != 128) {
      throw UsageError("flash3: head_dim must be 64 or 128 (the kernel's instantiations), got " +
                       std::to_string(p.head_dim));
    }
    check_attention_shape(p);
    if (!p.stages) p.stages = flash3_default_stages(p.head_dim);
    const AttentionShape a = attention_shape(p);
    checked_mul({a.batch_heads, ceil_div(a.nq, kBr), a.nkv, p.head_dim, p.element_size(), 2},
                "the K and V traffic of flash3");
  }

  std::vector<KernelInfo> launches(const WorkloadParams& p) const override {
    const Flash3Grid g(p);
    return {make_launch("flash3_fwd", g.grid(p.sm_count), kFlash3Threads,
                        flash3_smem_bytes(p.head_dim, *p.stages, p.element_size()),
                        kFlash3Registers)};
  }

  std::unique_ptr<Workload> make(const WorkloadParams& p) const override {
    return std::make_unique<Flash3>(p);
  }

  Traffic closed_form(const WorkloadParams& p) const override { return flash3_traffic(p); }

  SmemAdvice smem_advice(const WorkloadParams& p, const KernelInfo& /*launch*/,
                         std::uint64_t limit_bytes) const override {
    const std::uint32_t s = p.element_size();
    const std::uint64_t fixed = flash3_smem_bytes(p.head_dim, 0, s);
    const std::uint64_t per_stage = 2 * kBc * p.head_dim * s;
    std::string fits;
    if (limit_bytes > fixed + per_stage) {
      fits = "stages <= " + std::to_string((limit_bytes - fixed) / per_stage) + " fits";
    }
    return {"1 KiB + Q 128·" + std::to_string(p.head_dim) + "·" + std::to_string(s) + " + " +
                std::to_string(*p.stages) + "·2·128·" + std::to_string(p.head_dim) + "·" +
                std::to_string(s) + " (K, V) + O staging 128·" + std::to_string(p.head_dim) + "·" +
                std::to_string(s) + " + 256",
            "stages", fits};
  }

  double io_exponent(std::string_view axis) const override {  // Θ(N²d²/M), as flash2
    return axis == "seq" ? 2.0 : -1.0;
  }

  std::string tiling_text(const WorkloadParams& p) const override {
    return "Br = 128, Bc = 128, " + std::to_string(*p.stages) + " stages, persistent";
  }

  std::string_view output_tensor() const override { return "O"; }
  EigenBackend::Matrix reference_output(const Workload& workload,
                                        const EigenBackend& data) const override {
    return attention_reference(workload, data);
  }
};

}  // namespace

const WorkloadPlugin& flash3_plugin() {
  static const Flash3Plugin plugin;
  return plugin;
}

std::uint32_t flash3_default_stages(std::uint64_t head_dim) { return head_dim <= 64 ? 4 : 2; }

std::uint64_t flash3_softmax_cycles(std::uint64_t head_dim) { return head_dim <= 64 ? 1798 : 1875; }

std::uint64_t flash3_smem_bytes(std::uint64_t head_dim, std::uint64_t stages,
                                std::uint32_t element_bytes) {
  const std::uint64_t tile = kBr * head_dim * element_bytes;  // Q, and the O staging buffer
  return kSmemSlack + 2 * tile + stages * 2 * kBc * head_dim * element_bytes;
}

Traffic flash3_traffic(const WorkloadParams& p) {
  const Flash3Grid g(p);
  const AttentionShape& a = g.a;
  const std::uint64_t row = p.head_dim * p.element_size();
  // Per head: every Q block once; every key its Q block sees, once per Q block (all of them
  // without the mask).
  std::uint64_t kv_rows = 0;
  for (std::uint64_t qb = 0; qb < g.tr; ++qb) kv_rows += g.keys(g.blocks(qb));
  const std::uint64_t bh = a.batch_heads, nq = a.nq;
  return make_traffic({{"Q", bh * nq * row, 0},
                       {"K", bh * kv_rows * row, 0},
                       {"V", bh * kv_rows * row, 0},
                       {"O", 0, bh * nq * row},
                       {"L", 0, bh * nq * 4}});
}

}  // namespace memwall
