#include "models/naive.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/attention_params.h"
#include "models/checked_bytes.h"
#include "models/compiled_instructions.h"
#include "models/launch.h"
#include "models/reference.h"
#include "models/wgmma_gemm.h"
#include "models/workload.h"

namespace memwall {
namespace {

/// The CUDA kernels' warp grids (models/cuda/naive_attention.cu): qk lays 2 × 4 warps over the
/// S tile, pv 4 × 2 over the O tile. Each warp loads its own A rows and B columns from shared
/// memory (ldmatrix), so A is read once per warp column and B once per warp row.
constexpr std::uint64_t kQkWarpsM = 2, kQkWarpsN = 4;
constexpr std::uint64_t kPvWarpsM = 4, kPvWarpsN = 2;
/// Threads of a qk or pv CTA: its 2 × 4 (4 × 2) warps.
constexpr auto kMmaThreads = static_cast<std::uint32_t>(kQkWarpsM * kQkWarpsN * 32);
/// Warp instructions of naive_softmax_kernel per row and per 1024 keys (sm_90 SASS, measured).
constexpr std::uint64_t kSoftmaxIssuePerRow = 188, kSoftmaxIssuePer1024Keys = 671;
/// The same for naive_softmax_stream_kernel (sm_90 SASS, measured: smsp__inst_executed of the
/// kernel at N = 32768 and 65536, one row of N keys per warp, solved for the two terms;
/// traces/measured/h200-softmax-stream/).
constexpr std::uint64_t kStreamIssuePerRow = 257, kStreamIssuePer1024Keys = 789;
/// ptxas -v of naive_softmax_kernel and naive_softmax_stream_kernel (CUDA 13.0, sm_90a).
constexpr std::uint32_t kSoftmaxRegisters = 32, kStreamRegisters = 60;
/// softmax_chunk's default when the rows do not fit in shared memory: the keys one step of the
/// CUDA kernel's warp loads (32 lanes × 4 pieces of 8 halves).
constexpr std::uint32_t kDefaultStreamChunk = 1024;

/// `--gemm wgmma`'s qk (S = scale·QKᵀ, K K-major, block_q × block_kv tiles, over the head dim)
/// and pv (O = PV, V N-major, block_q × d tiles, over the keys) as the Hopper kernel runs them;
/// the query heads of one K/V head read its K and V (models/wgmma_gemm.h). Tensor ids are
/// Naive's: Q, K, V, S, P, O in declaration order.
WgmmaGemm wgmma_qk(const WorkloadParams& p) {
  WgmmaGemm g;
  g.a = 0, g.b = 1, g.c = 3;
  g.batch = p.batch_heads(), g.m = p.seq, g.n = p.kv_seq(), g.k = p.head_dim;
  g.b_group = p.group_size();
  g.bm = *p.block_q, g.bn = *p.block_kv;
  g.size_for(p);
  return g;
}
WgmmaGemm wgmma_pv(const WorkloadParams& p) {
  WgmmaGemm g;
  g.a = 4, g.b = 2, g.c = 5;
  g.batch = p.batch_heads(), g.m = p.seq, g.n = p.head_dim, g.k = p.kv_seq();
  g.b_n_major = true;
  g.b_group = p.group_size();
  g.bm = *p.block_q, g.bn = p.head_dim;
  g.size_for(p);
  return g;
}

/// Naive attention (Algorithm 0), three launches: qk (S = scale·QKᵀ), softmax (P = softmax(S)
/// by rows), pv (O = PV). Tiling per the contract in docs/models.md.
class Naive final : public BackendWorkload<Naive> {
 public:
  explicit Naive(const WorkloadParams& p) : BackendWorkload(p), m_shape(attention_shape(p)) {
    const std::uint64_t rows = p.batch_heads() * p.seq;
    const std::uint64_t kv_rows = m_shape.kv_batch_heads() * m_shape.nkv;
    const std::uint32_t s = p.element_size();
    m_q = add_input("Q", rows, p.head_dim, s);
    m_k = add_input("K", kv_rows, p.head_dim, s);
    m_v = add_input("V", kv_rows, p.head_dim, s);
    m_s = add_tensor("S", rows, m_shape.nkv, s);
    m_p = add_tensor("P", rows, m_shape.nkv, s);
    m_o = add_tensor("O", rows, p.head_dim, s);
    m_qk_issue = kernel_instructions("qk", p.head_dim, *p.block_q, *p.block_kv, 0).terms;
    m_pv_issue = kernel_instructions("pv", p.head_dim, *p.block_q, *p.block_k, 0).terms;
  }

 private:
  friend class BackendWorkload<Naive>;
  template <class Backend>
  void run(std::size_t kernel, std::uint64_t cta, Backend& be, Recorder& rec) const {
    const WorkloadParams& p = params();
    if (p.gemm == GemmKernel::wgmma && kernel != 1) {
      const WgmmaGemm g = kernel == 0 ? wgmma_qk(p) : wgmma_pv(p);
      const double alpha = kernel == 0 ? 1.0 / std::sqrt(static_cast<double>(p.head_dim)) : 1.0;
      wgmma_gemm_cta(
          g, cta, g.grid(p.sm_count), alpha,
          [this](std::uint8_t id, std::uint64_t r, std::uint64_t rs, std::uint64_t c,
                 std::uint64_t cs) { return box(id, r, rs, c, cs); },
          be, rec);
      return;
    }
    if (kernel == 0) qk(cta, be, rec);
    if (kernel == 1 && *p.softmax_chunk == 0) softmax(cta, be, rec);
    if (kernel == 1 && *p.softmax_chunk != 0) softmax_stream(cta, be, rec);
    if (kernel == 2) pv(cta, be, rec);
  }

  /// S tile (i, j) of head bh: one Q box and one K box (of its K/V head), the whole head dim,
  /// one S store. Every tile, masked or not: unfused attention writes S whole.
  template <class Backend>
  void qk(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const WorkloadParams& p = params();
    const std::uint64_t n = p.seq, nkv = m_shape.nkv, d = p.head_dim, s = p.element_size();
    const std::uint64_t bm = *p.block_q, bn = *p.block_kv;
    const std::uint64_t tn = ceil_div(nkv, bn), tm = ceil_div(n, bm);
    const std::uint64_t j = cta % tn, i = (cta / tn) % tm, bh = cta / (tn * tm);
    const std::uint64_t r0 = i * bm, rows = std::min(bm, n - r0);
    const std::uint64_t c0 = j * bn, cols = std::min(bn, nkv - c0);
    const std::uint64_t kv_row = m_shape.kv_head(bh) * nkv;
    rec.load(m_q, box(m_q, bh * n + r0, rows, 0, d), 0);
    rec.load(m_k, box(m_k, kv_row + c0, cols, 0, d), 0);
    rec.wait(0);
    rec.smem((kQkWarpsN * rows + kQkWarpsM * cols) * d * s);  // Q and K fragments, per warp
    rec.compute(ComputeUnit::mma_sync, 2 * rows * cols * d);
    // The kernel's warp instructions (models/compiled_instructions.h), the scale among them:
    // booked on the fp32 pipe asynchronously (tag 1), the issue slots the time.
    rec.compute(ComputeUnit::issue, m_qk_issue.per_cta);
    rec.compute(ComputeUnit::fp32, rows * cols, 1);  // the scale
    rec.wait(1);
    if constexpr (Backend::kNumeric) {
      const double scale = 1.0 / std::sqrt(static_cast<double>(d));
      const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
      be.t(m_s).block(e(bh * n + r0), e(c0), e(rows), e(cols)) =
          scale * be.t(m_q).block(e(bh * n + r0), 0, e(rows), e(d)) *
          be.t(m_k).block(e(kv_row + c0), 0, e(cols), e(d)).transpose();
    }
    rec.smem(2 * rows * cols * s);  // the S tile staged through shared memory (written, read)
    rec.store(m_s, box(m_s, bh * n + r0, rows, c0, cols));
  }

  /// softmax_rows whole rows of S in, the same rows of P out; each element of S read once. The
  /// causal mask is applied here: the keys a row does not see get P = 0.
  template <class Backend>
  void softmax(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const WorkloadParams& p = params();
    const std::uint64_t n = p.seq, nkv = m_shape.nkv, s = p.element_size(), r = *p.softmax_rows;
    const std::uint64_t blocks = ceil_div(n, r);
    const std::uint64_t bh = cta / blocks, r0 = (cta % blocks) * r, rows = std::min(r, n - r0);
    rec.load(m_s, box(m_s, bh * n + r0, rows, 0, nkv), 0);
    rec.wait(0);
    // As the CUDA kernel: a max pass, a sum pass (subtract, exp, add) and a normalise pass that
    // takes the exponential again (subtract, exp, multiply), each reading the rows from shared
    // memory; P is stored from registers. One reciprocal per row. With the mask, each element's
    // key is compared with its row's limit in the max pass.
    rec.smem(3 * rows * nkv * s);
    if (m_shape.causal) rec.compute(ComputeUnit::fp32, rows * nkv);
    rec.compute(ComputeUnit::fp32, 5 * rows * nkv);
    rec.compute(ComputeUnit::sfu, 2 * rows * nkv + rows);
    // The warp instructions the CUDA kernel issues (one warp per row): 188 per row and 167.75 per
    // 256 keys, all three passes (smsp__inst_executed of naive_softmax_kernel at N = 1024, 4096
    // and 16384, exact at all three: traces/measured/h200-pipe-probe). Its schedulers, not a
    // pipe, bound it where HBM does not (15-16 of 16 SMs' issue slots busy per cycle in 16 SMs).
    rec.compute(ComputeUnit::issue,
                rows * (kSoftmaxIssuePerRow + ceil_div(kSoftmaxIssuePer1024Keys * nkv, 1024)));
    if constexpr (Backend::kNumeric) {
      for (std::uint64_t q = 0; q < rows; ++q) {
        const auto row = static_cast<Eigen::Index>(bh * n + r0 + q);
        const auto seen = static_cast<Eigen::Index>(m_shape.keys_visible(r0 + q));
        const auto in = be.t(m_s).row(row).head(seen);
        auto out = be.t(m_p).row(row);
        const double mx = in.maxCoeff();
        out.head(seen) = (in.array() - mx).exp().matrix();
        out.tail(static_cast<Eigen::Index>(nkv) - seen).setZero();
        out /= out.sum();
      }
    }
    rec.store(m_p, box(m_p, bh * n + r0, rows, 0, nkv));
  }

  /// softmax_rows rows of S streamed from global memory in chunks of softmax_chunk keys, each
  /// chunk's load issued before the previous one is used (the CUDA kernel's register double
  /// buffer): a first pass keeps an online max and sum of exponentials, a second reads S again and
  /// stores P chunk by chunk. No shared memory; S is read twice (the second time from the L2 where
  /// it still holds the rows).
  template <class Backend>
  void softmax_stream(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const WorkloadParams& p = params();
    const std::uint64_t n = p.seq, nkv = m_shape.nkv, r = *p.softmax_rows, kc = *p.softmax_chunk;
    const std::uint64_t blocks = ceil_div(n, r), chunks = ceil_div(nkv, kc);
    const std::uint64_t bh = cta / blocks, r0 = (cta % blocks) * r, rows = std::min(r, n - r0);
    const auto width = [&](std::uint64_t c) { return std::min(kc, nkv - c * kc); };
    const auto issue = [&](std::uint64_t c) {
      rec.load(m_s, box(m_s, bh * n + r0, rows, c * kc, width(c)),
               static_cast<std::uint16_t>(c & 1));
    };
    rec.compute(ComputeUnit::issue,
                rows * (kStreamIssuePerRow + ceil_div(kStreamIssuePer1024Keys * nkv, 1024)));
    for (int pass = 0; pass < 2; ++pass) {
      issue(0);
      for (std::uint64_t c = 0; c < chunks; ++c) {
        const std::uint64_t kw = width(c);
        if (c + 1 < chunks) issue(c + 1);
        rec.wait(static_cast<std::uint16_t>(c & 1));
        if (pass == 0) {
          // Max, subtract and add per element (the causal compare with it), an exponential per
          // element and a rescale of the lane's sum per 8-key piece.
          if (m_shape.causal) rec.compute(ComputeUnit::fp32, rows * kw);
          rec.compute(ComputeUnit::fp32, 3 * rows * kw);
          rec.compute(ComputeUnit::sfu, rows * (kw + ceil_div(kw, 8)));
        } else {
          rec.compute(ComputeUnit::fp32, 2 * rows * kw);  // subtract, multiply
          rec.compute(ComputeUnit::sfu, rows * kw);
          rec.store(m_p, box(m_p, bh * n + r0, rows, c * kc, kw));
        }
      }
      // After the first pass, the lanes' statistics combined in 5 shuffle steps (two
      // exponentials each) and one reciprocal per row.
      if (pass == 0) rec.compute(ComputeUnit::sfu, rows * 11);
    }
    if constexpr (Backend::kNumeric) {
      for (std::uint64_t q = 0; q < rows; ++q) {
        const auto row = static_cast<Eigen::Index>(bh * n + r0 + q);
        const auto seen = static_cast<Eigen::Index>(m_shape.keys_visible(r0 + q));
        const auto in = be.t(m_s).row(row);
        // The online statistics chunk by chunk, as the first pass computes them.
        double mx = -std::numeric_limits<double>::infinity(), sum = 0.0;
        for (Eigen::Index c0 = 0; c0 < seen; c0 += static_cast<Eigen::Index>(kc)) {
          const auto part =
              in.segment(c0, std::min<Eigen::Index>(static_cast<Eigen::Index>(kc), seen - c0));
          const double m2 = std::max(mx, part.maxCoeff());
          sum = sum * std::exp(mx - m2) + (part.array() - m2).exp().sum();
          mx = m2;
        }
        auto out = be.t(m_p).row(row);
        out.head(seen) = ((in.head(seen).array() - mx).exp() / sum).matrix();
        out.tail(static_cast<Eigen::Index>(nkv) - seen).setZero();
      }
    }
  }

  /// O rows of Q block i: loop over k chunks of P (and the matching V rows of its K/V head),
  /// double-buffered (chunk c + 1 is issued under the other tag before chunk c is waited for),
  /// one O store. Every chunk, masked or not: P is a dense matrix to this kernel.
  template <class Backend>
  void pv(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const WorkloadParams& p = params();
    const std::uint64_t n = p.seq, nkv = m_shape.nkv, d = p.head_dim, s = p.element_size();
    const std::uint64_t bm = *p.block_q, bk = *p.block_k;
    const std::uint64_t tm = ceil_div(n, bm), chunks = ceil_div(nkv, bk);
    const std::uint64_t bh = cta / tm, r0 = (cta % tm) * bm, rows = std::min(bm, n - r0);
    const std::uint64_t kv_row = m_shape.kv_head(bh) * nkv;
    const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
    const auto issue = [&](std::uint64_t c) {
      const std::uint64_t k0 = c * bk, kw = std::min(bk, nkv - k0);
      const auto tag = static_cast<std::uint16_t>(c & 1);
      rec.load(m_p, box(m_p, bh * n + r0, rows, k0, kw), tag);
      rec.load(m_v, box(m_v, kv_row + k0, kw, 0, d), tag);
    };
    EigenBackend::Matrix acc;
    if constexpr (Backend::kNumeric) acc = EigenBackend::Matrix::Zero(e(rows), e(d));
    issue(0);
    // The kernel's warp instructions (models/compiled_instructions.h): per CTA once the first
    // loads are in flight, and per chunk with its products.
    rec.compute(ComputeUnit::issue, m_pv_issue.per_cta);
    for (std::uint64_t c = 0; c < chunks; ++c) {
      const std::uint64_t k0 = c * bk, kw = std::min(bk, nkv - k0);
      if (c + 1 < chunks) issue(c + 1);
      rec.wait(static_cast<std::uint16_t>(c & 1));
      rec.smem((kPvWarpsN * rows * kw + kPvWarpsM * kw * d) * s);  // P and V fragments, per warp
      rec.compute(ComputeUnit::mma_sync, 2 * rows * kw * d);
      rec.compute(ComputeUnit::issue, m_pv_issue.per_step);
      if constexpr (Backend::kNumeric) {
        acc += be.t(m_p).block(e(bh * n + r0), e(k0), e(rows), e(kw)) *
               be.t(m_v).block(e(kv_row + k0), 0, e(kw), e(d));
      }
      rec.barrier();
    }
    if constexpr (Backend::kNumeric) be.t(m_o).block(e(bh * n + r0), 0, e(rows), e(d)) = acc;
    rec.smem(2 * rows * d * s);  // the O tile staged through shared memory (written, read)
    rec.store(m_o, box(m_o, bh * n + r0, rows, 0, d));
  }

  AttentionShape m_shape;
  InstructionTerms m_qk_issue, m_pv_issue;  ///< the mma.sync kernels' warp instructions
  std::uint8_t m_q = 0, m_k = 0, m_v = 0, m_s = 0, m_p = 0, m_o = 0;
};

constexpr ParamSpec kParams[] = {
    kDtypeParam,
    kBatchParam,
    kHeadsParam,
    kSeqParam,
    with_max(kHeadDimParam, 256, "naive attention holds the whole head dim in one qk tile"),
    kKvHeadsParam,
    kSeqKvParam,
    kCausalParam,
    {.name = "block_q",
     .flag = "--block-q",
     .type = ParamType::kTile,
     .unit = "rows",
     .help = "Rows of Q per qk and pv tile (bm)",
     .default_value = 128,
     .min = 1,
     .field = field_of<&WorkloadParams::block_q>()},
    {.name = "block_kv",
     .flag = "--block-kv",
     .type = ParamType::kTile,
     .unit = "rows",
     .help = "Rows of K per qk tile (bn)",
     .default_value = 128,
     .min = 1,
     .field = field_of<&WorkloadParams::block_kv>()},
    {.name = "block_k",
     .flag = "--block-k",
     .type = ParamType::kTile,
     .unit = "columns",
     .help = "Columns of P (rows of V) per pv k chunk",
     .default_value = 64,
     .min = 1,
     .field = field_of<&WorkloadParams::block_k>()},
    {.name = "softmax_rows",
     .flag = "--softmax-rows",
     .type = ParamType::kTile,
     .unit = "rows",
     .help = "Rows of S per softmax CTA, a warp each",
     .default_value = 4,
     .min = 1,
     .max = 32,
     .max_reason = "one warp per row, at most 1024 threads per CTA",
     .field = field_of<&WorkloadParams::softmax_rows>()},
    {.name = "softmax_chunk",
     .flag = "--softmax-chunk",
     .type = ParamType::kTile,
     .unit = "keys",
     .help = "Keys of S per load when the softmax streams its rows from global memory (two reads "
             "of S: an online max and sum, then P; no shared memory); 0 keeps softmax_rows whole "
             "rows in shared memory (one read of S)",
     .default_text = "0 where softmax_rows rows of S fit in the config's smem_per_block, else 1024",
     .field = field_of<&WorkloadParams::softmax_chunk>(),
     .listed = [](const WorkloadParams& p) { return p.softmax_chunk.value_or(0) != 0; }},
    kGemmParam,
};

class NaivePlugin final : public WorkloadPlugin {
 public:
  std::string_view name() const override { return "naive"; }
  std::string_view summary() const override {
    return "Standard attention (Algorithm 0) in three launches: qk stores S = scale·QKᵀ, softmax "
           "stores P (the causal mask applied there), pv stores O = PV";
  }
  std::span<const ParamSpec> params() const override { return kParams; }

  void resolve(WorkloadParams& p) const override {
    const std::uint64_t qkv = check_attention_shape(p);
    if (!p.softmax_chunk) {
      const std::uint64_t rows_bytes = checked_mul(
          {std::min<std::uint64_t>(*p.softmax_rows, p.seq), p.kv_seq(), p.element_size()},
          "the softmax's rows of S (softmax_rows·seq_kv·element size)");
      const bool fits = !p.smem_limit_bytes || rows_bytes <= *p.smem_limit_bytes;
      p.softmax_chunk = fits ? 0 : kDefaultStreamChunk;
    }
    if (!p.gemm) p.gemm = GemmKernel::mma_sync;
    if (p.gemm == GemmKernel::wgmma) {
      check_wgmma_arch(p, "--gemm wgmma");
      check_wgmma_tile(*p.block_q, *p.block_kv, "block_q", "block_kv");
      check_wgmma_tile(*p.block_q, p.head_dim, "block_q", "head_dim (pv's tile is block_q × d)");
      if (*p.block_k != kWgmmaTileK) {
        throw UsageError("--gemm wgmma: block_k must be 64 (the kernel's K-tile), got " +
                         std::to_string(*p.block_k));
      }
      for (const WgmmaGemm& g : {wgmma_qk(p), wgmma_pv(p)}) check_wgmma_runs(g, p);
    }
    const std::uint64_t snn = checked_mul({p.batch_heads(), p.seq, *p.seq_kv, p.element_size()},
                                          "S (batch·heads·seq·seq_kv)");
    checked_mul(qkv, ceil_div(*p.seq_kv, *p.block_kv), "the Q traffic of qk");
    checked_mul(
        {p.batch_heads(), *p.seq_kv, p.head_dim, p.element_size(), ceil_div(p.seq, *p.block_q)},
        "the K traffic of qk");
    checked_mul(snn, 5, "the S and P traffic");
  }

  std::vector<KernelInfo> launches(const WorkloadParams& p) const override {
    const std::uint64_t n = p.seq, nkv = p.kv_seq(), d = p.head_dim, bh = p.batch_heads();
    const std::uint64_t s = p.element_size();
    const std::uint64_t br = std::min<std::uint64_t>(*p.block_q, n);
    const std::uint64_t bc = std::min<std::uint64_t>(*p.block_kv, nkv);
    const std::uint64_t bk = std::min<std::uint64_t>(*p.block_k, nkv);
    const std::uint64_t rows = std::min<std::uint64_t>(*p.softmax_rows, n);
    const bool stream = *p.softmax_chunk != 0;
    const KernelInfo softmax = make_launch(
        "softmax", bh * ceil_div(n, *p.softmax_rows), static_cast<std::uint32_t>(32 * rows),
        stream ? 0 : rows * nkv * s, stream ? kStreamRegisters : kSoftmaxRegisters);
    if (p.gemm == GemmKernel::wgmma) {
      return {wgmma_qk(p).launch("qk", p.sm_count), softmax, wgmma_pv(p).launch("pv", p.sm_count)};
    }
    return {
        make_launch("qk", bh * ceil_div(n, *p.block_q) * ceil_div(nkv, *p.block_kv), kMmaThreads,
                    (br + bc) * d * s,
                    kernel_registers(p, "qk", *p.block_q, *p.block_kv, 0, br * bc, kMmaThreads)),
        softmax,
        make_launch("pv", bh * ceil_div(n, *p.block_q), kMmaThreads,
                    2 * (br * bk + bk * d) * s,  // two P/V stages
                    kernel_registers(p, "pv", *p.block_q, *p.block_k, 0, br * d, kMmaThreads)),
    };
  }

  std::unique_ptr<Workload> make(const WorkloadParams& p) const override {
    return std::make_unique<Naive>(p);
  }

  Traffic closed_form(const WorkloadParams& p) const override { return naive_traffic(p); }

  SmemAdvice smem_advice(const WorkloadParams& p, const KernelInfo& launch,
                         std::uint64_t limit_bytes) const override {
    if (launch.name != "softmax") return {"", "block_q/block_kv/block_k", ""};
    const std::uint64_t row = p.kv_seq() * p.element_size();
    return {"",
            "softmax_rows (" + std::to_string(*p.softmax_rows) + " rows of " +
                std::to_string(p.kv_seq()) + " elements)",
            (row <= limit_bytes ? "softmax_rows <= " + std::to_string(limit_bytes / row) + " fits"
                                : "not even one row of S fits") +
                ", or --softmax-chunk 1024 streams the rows without shared memory"};
  }

  double io_exponent(std::string_view axis) const override {  // Θ(Nd + N²): N² at any M
    return axis == "seq" ? 2.0 : 0.0;
  }

  std::string tiling_text(const WorkloadParams& p) const override {
    return "bm = " + std::to_string(*p.block_q) + ", bn = " + std::to_string(*p.block_kv);
  }

  std::string_view output_tensor() const override { return "O"; }
  EigenBackend::Matrix reference_output(const Workload& workload,
                                        const EigenBackend& data) const override {
    return attention_reference(workload, data);
  }
};

}  // namespace

const WorkloadPlugin& naive_plugin() {
  static const NaivePlugin plugin;
  return plugin;
}

Traffic naive_traffic(const WorkloadParams& p) {
  const std::uint64_t bh = p.batch_heads(), nq = p.seq, nkv = p.kv_seq(), s = p.element_size();
  const std::uint64_t q = bh * nq * p.head_dim * s, kv = bh * nkv * p.head_dim * s;
  const std::uint64_t score = bh * nq * nkv * s;
  // qk loads a Q tile per K tile column and a K tile per Q tile row (of each query head's K/V
  // head); pv loads V per Q tile row; a streaming softmax reads S twice. The mask changes no
  // byte: S and P are dense.
  const std::uint64_t s_reads = p.softmax_chunk.value_or(0) != 0 ? 2 : 1;
  return make_traffic({{"Q", q * ceil_div(nkv, *p.block_kv), 0},
                       {"K", kv * ceil_div(nq, *p.block_q), 0},
                       {"V", kv * ceil_div(nq, *p.block_q), 0},
                       {"S", s_reads * score, score},
                       {"P", score, score},
                       {"O", 0, q}});
}

}  // namespace memwall
