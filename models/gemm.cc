#include "models/gemm.h"

#include <algorithm>
#include <limits>

#include "models/checked_bytes.h"
#include "models/launch.h"
#include "models/wgmma_gemm.h"
#include "models/workload.h"
#include "sim/core/error.h"

namespace memwall {
namespace {

/// Threads of a gemm CTA (8 warps).
constexpr std::uint32_t kThreads = 256;

/// The wgmma kernel's product: B is k × n row-major (N-major), tiles tile_m × tile_n.
WgmmaGemm wgmma_of(const WorkloadParams& p, std::uint8_t a, std::uint8_t b, std::uint8_t c) {
  WgmmaGemm g;
  g.a = a;
  g.b = b;
  g.c = c;
  g.m = p.m;
  g.n = p.n;
  g.k = p.k;
  g.b_n_major = true;
  g.bm = *p.tile_m;
  g.bn = *p.tile_n;
  g.size_for(p);
  return g;
}

/// C = A·B (A: m×k, B: k×n, row-major). mma_sync: one CTA per tile_m × tile_n output tile, in
/// row-major tile order, looping over k in chunks of tile_k; C stored once per tile. wgmma: the
/// Hopper kernel (models/wgmma_gemm.h) on the same tiles, K-tile 64.
class Gemm final : public BackendWorkload<Gemm> {
 public:
  explicit Gemm(const WorkloadParams& p) : BackendWorkload(p) {
    const std::uint32_t s = p.element_size();
    m_a = add_input("A", p.m, p.k, s);
    m_b = add_input("B", p.k, p.n, s);
    m_c = add_tensor("C", p.m, p.n, s);
  }

 private:
  friend class BackendWorkload<Gemm>;
  template <class Backend>
  void run(std::size_t kernel, std::uint64_t cta, Backend& be, Recorder& rec) const {
    if (kernel != 0) return;
    const WorkloadParams& p = params();
    if (p.gemm == GemmKernel::wgmma) {
      const WgmmaGemm g = wgmma_of(p, m_a, m_b, m_c);
      wgmma_gemm_cta(
          g, cta, g.grid(p.sm_count), 1.0,
          [this](std::uint8_t id, std::uint64_t r, std::uint64_t rs, std::uint64_t c,
                 std::uint64_t cs) { return box(id, r, rs, c, cs); },
          be, rec);
      return;
    }
    const std::uint64_t s = p.element_size();
    const std::uint64_t tm = *p.tile_m, tn = *p.tile_n, tk = *p.tile_k;
    const std::uint64_t gn = ceil_div(p.n, tn);
    const std::uint64_t r0 = (cta / gn) * tm, c0 = (cta % gn) * tn;
    const std::uint64_t rows = std::min(tm, p.m - r0), cols = std::min(tn, p.n - c0);
    const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
    EigenBackend::Matrix acc;
    if constexpr (Backend::kNumeric) acc = EigenBackend::Matrix::Zero(e(rows), e(cols));
    for (std::uint64_t k0 = 0; k0 < p.k; k0 += tk) {
      const std::uint64_t kw = std::min(tk, p.k - k0);
      rec.load(m_a, box(m_a, r0, rows, k0, kw), 0);
      rec.load(m_b, box(m_b, k0, kw, c0, cols), 0);
      rec.wait(0);
      rec.smem((rows * kw + kw * cols) * s);
      rec.compute(ComputeUnit::mma_sync, 2 * rows * cols * kw);
      if constexpr (Backend::kNumeric) {
        acc += be.t(m_a).block(e(r0), e(k0), e(rows), e(kw)) *
               be.t(m_b).block(e(k0), e(c0), e(kw), e(cols));
      }
      rec.barrier();
    }
    if constexpr (Backend::kNumeric) be.t(m_c).block(e(r0), e(c0), e(rows), e(cols)) = acc;
    rec.store(m_c, box(m_c, r0, rows, c0, cols));
  }

  std::uint8_t m_a = 0, m_b = 0, m_c = 0;
};

constexpr ParamSpec kParams[] = {
    kDtypeParam,
    {.name = "m",
     .flag = "--m",
     .type = ParamType::kCount,
     .unit = "rows",
     .help = "Rows of A and C",
     .min = 1,
     .field = field_of<&WorkloadParams::m>()},
    {.name = "n",
     .flag = "--n",
     .type = ParamType::kCount,
     .unit = "columns",
     .help = "Columns of B and C",
     .min = 1,
     .field = field_of<&WorkloadParams::n>()},
    {.name = "k",
     .flag = "--k",
     .type = ParamType::kCount,
     .unit = "elements",
     .help = "Columns of A, rows of B",
     .min = 1,
     .field = field_of<&WorkloadParams::k>()},
    {.name = "tile_m",
     .flag = "--tile-m",
     .type = ParamType::kTile,
     .unit = "rows",
     .help = "Output tile rows",
     .default_value = 128,
     .min = 1,
     .field = field_of<&WorkloadParams::tile_m>()},
    {.name = "tile_n",
     .flag = "--tile-n",
     .type = ParamType::kTile,
     .unit = "columns",
     .help = "Output tile columns",
     .default_value = 128,
     .min = 1,
     .field = field_of<&WorkloadParams::tile_n>()},
    {.name = "tile_k",
     .flag = "--tile-k",
     .type = ParamType::kTile,
     .unit = "elements",
     .help = "k chunk per loop step (wgmma: 64, the kernel's K-tile, and nothing else)",
     .default_text = "32 (mma_sync), 64 (wgmma)",
     .min = 1,
     .field = field_of<&WorkloadParams::tile_k>()},
    kGemmParam,
};

class GemmPlugin final : public WorkloadPlugin {
 public:
  std::string_view name() const override { return "gemm"; }
  std::string_view summary() const override {
    return "C = A·B (A m×k, B k×n): one CTA per tile_m × tile_n output tile, looping over k in "
           "chunks of tile_k";
  }
  std::span<const ParamSpec> params() const override { return kParams; }

  void resolve(WorkloadParams& p) const override {
    if (!p.gemm) p.gemm = GemmKernel::mma_sync;
    if (p.gemm == GemmKernel::wgmma) {
      check_wgmma_arch(p, "--gemm wgmma");
      if (!p.tile_k) p.tile_k = static_cast<std::uint32_t>(kWgmmaTileK);
      if (*p.tile_k != kWgmmaTileK) {
        throw UsageError(
            "--gemm wgmma: tile_k must be 64 (the kernel's K-tile: one 128-byte "
            "row of fp16), got " +
            std::to_string(*p.tile_k));
      }
      check_wgmma_tile(*p.tile_m, *p.tile_n, "tile_m", "tile_n");
      check_wgmma_runs(wgmma_of(p, 0, 1, 2), p);
    }
    if (!p.tile_k) p.tile_k = 32;
    // Every tensor and every traffic term must fit in 64 bits (and a row in a 32-bit box field).
    const std::uint64_t s = p.element_size();
    const std::uint64_t a = checked_mul({p.m, p.k, s}, "A (m·k)");
    const std::uint64_t b = checked_mul({p.k, p.n, s}, "B (k·n)");
    checked_mul({p.m, p.n, s}, "C (m·n)");
    checked_mul(a, ceil_div(p.n, *p.tile_n), "the A traffic m·k·⌈n/tile_n⌉");
    checked_mul(b, ceil_div(p.m, *p.tile_m), "the B traffic k·n·⌈m/tile_m⌉");
    if (p.k * s > std::numeric_limits<std::uint32_t>::max() ||
        p.n * s > std::numeric_limits<std::uint32_t>::max()) {
      throw UsageError("k and n must each be below 2^32 bytes per row");
    }
  }

  std::vector<KernelInfo> launches(const WorkloadParams& p) const override {
    if (p.gemm == GemmKernel::wgmma) return {wgmma_of(p, 0, 1, 2).launch("gemm", p.sm_count)};
    const std::uint64_t tm = std::min<std::uint64_t>(*p.tile_m, p.m);
    const std::uint64_t tn = std::min<std::uint64_t>(*p.tile_n, p.n);
    const std::uint64_t tk = std::min<std::uint64_t>(*p.tile_k, p.k);
    return {make_launch("gemm", ceil_div(p.m, *p.tile_m) * ceil_div(p.n, *p.tile_n), kThreads,
                        (tm * tk + tk * tn) * p.element_size(),
                        estimated_registers(tm * tn, kThreads))};
  }

  std::unique_ptr<Workload> make(const WorkloadParams& p) const override {
    return std::make_unique<Gemm>(p);
  }

  Traffic closed_form(const WorkloadParams& p) const override {
    return gemm_traffic(p.m, p.n, p.k, p.element_size(), *p.tile_m, *p.tile_n);
  }

  SmemAdvice smem_advice(const WorkloadParams& /*p*/, const KernelInfo& /*launch*/,
                         std::uint64_t /*limit_bytes*/) const override {
    return {"", "tile_m/tile_n/tile_k", ""};
  }

  double io_exponent(std::string_view axis) const override {  // Hong–Kung: Θ(n³/√M)
    return axis == "seq" ? 3.0 : -0.5;
  }

  void io_defaults(WorkloadParams& p, bool seq_given, std::optional<std::uint64_t> sram_bytes,
                   std::uint64_t /*smem_per_block*/) const override {
    if (seq_given) p.m = p.n = p.k = p.seq;  // the IO axis: a square product
    if (!sram_bytes || (p.tile_m && p.tile_n)) return;
    // The largest square tile t whose A, B and C tiles fit M: (t + 1)² + 2(t + 1)·tile_k > M.
    const std::uint64_t m_elems = *sram_bytes / element_bytes(p.dtype);
    const std::uint64_t tk = p.tile_k.value_or(32);
    std::uint64_t t = 1;
    while ((t + 1) * (t + 1) + 2 * (t + 1) * tk <= m_elems) ++t;
    // Whole 32-byte sectors per tile row, so that sector rounding adds no traffic.
    const std::uint64_t align = std::max<std::uint64_t>(1, 32 / element_bytes(p.dtype));
    if (t >= align) t -= t % align;
    if (!p.tile_m) p.tile_m = static_cast<std::uint32_t>(t);
    if (!p.tile_n) p.tile_n = static_cast<std::uint32_t>(t);
  }

  std::string_view output_tensor() const override { return "C"; }
  EigenBackend::Matrix reference_output(const Workload& workload,
                                        const EigenBackend& data) const override {
    return data.t(workload.tensor_id("A")) * data.t(workload.tensor_id("B"));
  }
};

}  // namespace

const WorkloadPlugin& gemm_plugin() {
  static const GemmPlugin plugin;
  return plugin;
}

Traffic gemm_traffic(std::uint64_t m, std::uint64_t n, std::uint64_t k, std::uint32_t s,
                     std::uint64_t tm, std::uint64_t tn) {
  return make_traffic({{"A", m * k * s * ceil_div(n, tn), 0},
                       {"B", k * n * s * ceil_div(m, tm), 0},
                       {"C", 0, m * n * s}});
}

}  // namespace memwall
