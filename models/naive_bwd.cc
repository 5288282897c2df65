#include "models/naive_bwd.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "models/attention_backward.h"
#include "models/attention_params.h"
#include "models/checked_bytes.h"
#include "models/compiled_instructions.h"
#include "models/launch.h"
#include "models/reference.h"
#include "models/workload.h"
#include "sim/core/interrupt.h"

namespace memwall {
namespace {

/// Threads of a matrix-product CTA (8 warps, as naive's qk and pv) and of a summing CTA.
constexpr std::uint32_t kMmaThreads = 256;
/// The CUDA kernels' warp grids (models/cuda/naive_backward.cu): dv, dq and dk lay 4 × 2 warps
/// over the output tile (as naive's pv), dp 2 × 4 (it is naive's qk kernel). Each warp loads its
/// own A rows and B columns from shared memory (ldmatrix), so A is read once per warp column and
/// B once per warp row.
constexpr std::uint64_t kProductWarpsM = 4, kProductWarpsN = 2;
constexpr std::uint64_t kDpWarpsM = 2, kDpWarpsN = 4;
constexpr std::uint32_t kSumThreads = 128;

/// Launch indices.
constexpr std::size_t kDv = 0, kDp = 1, kSoftmaxBwd = 2, kDq = 3, kDk = 4, kSumDkv = 5;

/// The unfused attention backward. Inputs Q, K, V, dO (random) and the forward's P (computed
/// from them by prepare_inputs); outputs dQ, dK, dV.
class NaiveBwd final : public AttentionBackwardWorkload<NaiveBwd> {
 public:
  explicit NaiveBwd(const WorkloadParams& p) : AttentionBackwardWorkload(p) {
    const std::uint64_t rows = m_a.batch_heads * m_a.nq;
    const std::uint64_t kv_rows = m_a.kv_batch_heads() * m_a.nkv;
    const std::uint32_t s = p.element_size();
    const std::uint64_t d = p.head_dim;
    m_q = add_input("Q", rows, d, s);
    m_k = add_input("K", kv_rows, d, s);
    m_v = add_input("V", kv_rows, d, s);
    m_do = add_input("dO", rows, d, s);
    m_p = add_tensor("P", rows, m_a.nkv, s);
    m_dp = add_tensor("dP", rows, m_a.nkv, s);
    m_ds = add_tensor("dS", rows, m_a.nkv, s);
    m_dq = add_tensor("dQ", rows, d, s);
    add_kv_gradients();
    m_dv_issue = kernel_instructions("naive_bwd_dv", d, bm(), bk(), 0).terms;
    m_dq_issue = kernel_instructions("naive_bwd_dq", d, bm(), bk(), 0).terms;
    m_dp_issue = kernel_instructions("qk", d, bm(), bn(), 0).terms;
  }

  /// The forward's P: the masked softmax of scale·QKᵀ per query head.
  void prepare_inputs(EigenBackend& data) const override {
    const double scale = 1.0 / std::sqrt(static_cast<double>(m_a.d));
    for (std::uint64_t bh = 0; bh < m_a.batch_heads; ++bh) {
      throw_if_interrupted();
      Matrix p = scale * data.t(m_q).middleRows(e(bh * m_a.nq), e(m_a.nq)) *
                 data.t(m_k).middleRows(e(m_a.kv_head(bh) * m_a.nkv), e(m_a.nkv)).transpose();
      masked_softmax_rows(p, m_a, 0);
      data.t(m_p).middleRows(e(bh * m_a.nq), e(m_a.nq)) = p;
    }
  }

 private:
  friend class BackendWorkload<NaiveBwd>;
  friend class AttentionBackwardWorkload<NaiveBwd>;
  using Matrix = EigenBackend::Matrix;

  static Eigen::Index e(std::uint64_t x) { return static_cast<Eigen::Index>(x); }
  std::uint64_t bm() const { return *params().block_q; }
  std::uint64_t bn() const { return *params().block_kv; }
  std::uint64_t bk() const { return *params().block_k; }
  double scale() const { return 1.0 / std::sqrt(static_cast<double>(m_a.d)); }

  template <class Backend>
  void run(std::size_t kernel, std::uint64_t cta, Backend& be, Recorder& rec) const {
    if (kernel == kDv) transposed_product(cta, m_p, m_do, false, be, rec);
    if (kernel == kDp) dp(cta, be, rec);
    if (kernel == kSoftmaxBwd) softmax_bwd(cta, be, rec);
    if (kernel == kDq) dq(cta, be, rec);
    if (kernel == kDk) transposed_product(cta, m_ds, m_q, true, be, rec);
    if (kernel == kSumDkv) sum_dkv(cta, bm(), be, rec);
  }

  /// dV = PᵀdO (a = P, b = dO) or dK = scale·dSᵀQ (a = dS, b = Q) for the bm rows of keys from
  /// c0 of query head bh: over the query rows in chunks of block_k, double-buffered. Writes the
  /// K/V head's rows, or with groups the query head's rows of the expanded tensor.
  template <class Backend>
  void transposed_product(std::uint64_t cta, std::uint8_t a, std::uint8_t b, bool is_dk,
                          Backend& be, Recorder& rec) const {
    const std::uint64_t d = m_a.d, nq = m_a.nq, s = params().element_size();
    const std::uint64_t tiles = ceil_div(m_a.nkv, bm()), chunks = ceil_div(nq, bk());
    const std::uint64_t bh = cta / tiles, c0 = (cta % tiles) * bm();
    const std::uint64_t rows = std::min(bm(), m_a.nkv - c0);
    const auto issue = [&](std::uint64_t c) {
      const std::uint64_t k0 = c * bk(), kw = std::min(bk(), nq - k0);
      const auto tag = static_cast<std::uint16_t>(c & 1);
      rec.load(a, box(a, bh * nq + k0, kw, c0, rows), tag);
      rec.load(b, box(b, bh * nq + k0, kw, 0, d), tag);
    };
    Matrix acc;
    if constexpr (Backend::kNumeric) acc = Matrix::Zero(e(rows), e(d));
    issue(0);
    // The kernel's warp instructions (models/compiled_instructions.h; dK's kernel is dV's): per
    // CTA once the first loads are in flight, and per chunk with its products; dK's scale among
    // them, on the fp32 pipe asynchronously (tag 2).
    rec.compute(ComputeUnit::issue, m_dv_issue.per_cta);
    for (std::uint64_t c = 0; c < chunks; ++c) {
      const std::uint64_t k0 = c * bk(), kw = std::min(bk(), nq - k0);
      if (c + 1 < chunks) issue(c + 1);
      rec.wait(static_cast<std::uint16_t>(c & 1));
      rec.smem((kProductWarpsN * rows * kw + kProductWarpsM * kw * d) * s);  // per warp
      rec.compute(ComputeUnit::mma_sync, 2 * rows * kw * d);
      rec.compute(ComputeUnit::issue, m_dv_issue.per_step);
      if constexpr (Backend::kNumeric) {
        throw_if_interrupted();
        acc += be.t(a).block(e(bh * nq + k0), e(c0), e(kw), e(rows)).transpose() *
               be.t(b).middleRows(e(bh * nq + k0), e(kw));
      }
      rec.barrier();
    }
    if (is_dk) rec.compute(ComputeUnit::fp32, rows * d, 2);
    rec.wait(2);
    const bool grouped = m_a.group > 1;
    const std::uint8_t out = grouped ? (is_dk ? m_dk_x : m_dv_x) : (is_dk ? m_dk : m_dv);
    const std::uint64_t out_row = (grouped ? bh : m_a.kv_head(bh)) * m_a.nkv + c0;
    if constexpr (Backend::kNumeric) {
      be.t(out).middleRows(e(out_row), e(rows)) = is_dk ? Matrix(scale() * acc) : acc;
    }
    rec.smem(2 * rows * d * s);  // the output tile staged through shared memory (written, read)
    rec.store(out, box(out, out_row, rows, 0, d));
  }

  /// dP tile (i, j) of query head bh = dO·Vᵀ: one dO box and one V box (of its K/V head).
  template <class Backend>
  void dp(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const std::uint64_t d = m_a.d, nq = m_a.nq, nkv = m_a.nkv, s = params().element_size();
    const std::uint64_t tn = ceil_div(nkv, bn()), tm = ceil_div(nq, bm());
    const std::uint64_t j = cta % tn, i = (cta / tn) % tm, bh = cta / (tn * tm);
    const std::uint64_t r0 = i * bm(), rows = std::min(bm(), nq - r0);
    const std::uint64_t c0 = j * bn(), cols = std::min(bn(), nkv - c0);
    const std::uint64_t kv_row = m_a.kv_head(bh) * nkv + c0;
    rec.load(m_do, box(m_do, bh * nq + r0, rows, 0, d), 0);
    rec.load(m_v, box(m_v, kv_row, cols, 0, d), 0);
    rec.wait(0);
    rec.smem((kDpWarpsN * rows + kDpWarpsM * cols) * d * s);  // dO and V fragments, per warp
    rec.compute(ComputeUnit::mma_sync, 2 * rows * cols * d);
    rec.compute(ComputeUnit::issue, m_dp_issue.per_cta);  // naive's qk kernel's instructions
    if constexpr (Backend::kNumeric) {
      be.t(m_dp).block(e(bh * nq + r0), e(c0), e(rows), e(cols)) =
          be.t(m_do).middleRows(e(bh * nq + r0), e(rows)) *
          be.t(m_v).middleRows(e(kv_row), e(cols)).transpose();
    }
    rec.smem(2 * rows * cols * s);  // the dP tile staged through shared memory
    rec.store(m_dp, box(m_dp, bh * nq + r0, rows, c0, cols));
  }

  /// dS = P∘(dP − rowsum(dP∘P)) for softmax_rows whole rows: P and dP in, dS out.
  template <class Backend>
  void softmax_bwd(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const std::uint64_t nq = m_a.nq, nkv = m_a.nkv, s = params().element_size();
    const std::uint64_t r = *params().softmax_rows, blocks = ceil_div(nq, r);
    const std::uint64_t bh = cta / blocks, r0 = (cta % blocks) * r, rows = std::min(r, nq - r0);
    const std::uint64_t row = bh * nq + r0;
    rec.load(m_p, box(m_p, row, rows, 0, nkv), 0);
    rec.load(m_dp, box(m_dp, row, rows, 0, nkv), 0);
    rec.wait(0);
    rec.smem(2 * 3 * rows * nkv * s);  // P and dP rows copied in, read twice: the sum, then dS
    rec.compute(ComputeUnit::fp32, 4 * rows * nkv);
    if constexpr (Backend::kNumeric) {
      const auto p = be.t(m_p).middleRows(e(row), e(rows));
      const auto g = be.t(m_dp).middleRows(e(row), e(rows));
      const Eigen::VectorXd sum = g.cwiseProduct(p).rowwise().sum();
      be.t(m_ds).middleRows(e(row), e(rows)) = p.cwiseProduct(g.colwise() - sum);
    }
    rec.store(m_ds, box(m_ds, row, rows, 0, nkv));
  }

  /// dQ = scale·dS·K for the bm query rows of Q block i: over the keys in chunks of block_k.
  template <class Backend>
  void dq(std::uint64_t cta, Backend& be, Recorder& rec) const {
    const std::uint64_t d = m_a.d, nq = m_a.nq, nkv = m_a.nkv, s = params().element_size();
    const std::uint64_t tm = ceil_div(nq, bm()), chunks = ceil_div(nkv, bk());
    const std::uint64_t bh = cta / tm, r0 = (cta % tm) * bm(), rows = std::min(bm(), nq - r0);
    const std::uint64_t kv_row = m_a.kv_head(bh) * nkv;
    const auto issue = [&](std::uint64_t c) {
      const std::uint64_t k0 = c * bk(), kw = std::min(bk(), nkv - k0);
      const auto tag = static_cast<std::uint16_t>(c & 1);
      rec.load(m_ds, box(m_ds, bh * nq + r0, rows, k0, kw), tag);
      rec.load(m_k, box(m_k, kv_row + k0, kw, 0, d), tag);
    };
    Matrix acc;
    if constexpr (Backend::kNumeric) acc = Matrix::Zero(e(rows), e(d));
    issue(0);
    // The kernel's warp instructions, as dV's above (the scale asynchronous under tag 2).
    rec.compute(ComputeUnit::issue, m_dq_issue.per_cta);
    for (std::uint64_t c = 0; c < chunks; ++c) {
      const std::uint64_t k0 = c * bk(), kw = std::min(bk(), nkv - k0);
      if (c + 1 < chunks) issue(c + 1);
      rec.wait(static_cast<std::uint16_t>(c & 1));
      rec.smem((kProductWarpsN * rows * kw + kProductWarpsM * kw * d) * s);  // per warp
      rec.compute(ComputeUnit::mma_sync, 2 * rows * kw * d);
      rec.compute(ComputeUnit::issue, m_dq_issue.per_step);
      if constexpr (Backend::kNumeric) {
        throw_if_interrupted();
        acc += be.t(m_ds).block(e(bh * nq + r0), e(k0), e(rows), e(kw)) *
               be.t(m_k).middleRows(e(kv_row + k0), e(kw));
      }
      rec.barrier();
    }
    rec.compute(ComputeUnit::fp32, rows * d, 2);
    rec.wait(2);
    if constexpr (Backend::kNumeric)
      be.t(m_dq).middleRows(e(bh * nq + r0), e(rows)) = scale() * acc;
    rec.smem(2 * rows * d * s);  // the dQ tile staged through shared memory (written, read)
    rec.store(m_dq, box(m_dq, bh * nq + r0, rows, 0, d));
  }

  std::uint8_t m_q = 0, m_k = 0, m_v = 0, m_do = 0, m_p = 0, m_dp = 0, m_ds = 0;
  std::uint8_t m_dq = 0;
  InstructionTerms m_dv_issue, m_dq_issue, m_dp_issue;  ///< the kernels' warp instructions
};

constexpr ParamSpec kParams[] = {
    kDtypeParam,
    kBatchParam,
    kHeadsParam,
    kSeqParam,
    with_max(kHeadDimParam, 256, "the dp tiles hold the whole head dim"),
    kKvHeadsParam,
    kSeqKvParam,
    kCausalParam,
    {.name = "block_q",
     .flag = "--block-q",
     .type = ParamType::kTile,
     .unit = "rows",
     .help = "Rows per output tile of the products (bm: query rows of dp and dq, key rows of dv "
             "and dk)",
     .default_value = 128,
     .min = 1,
     .field = field_of<&WorkloadParams::block_q>()},
    {.name = "block_kv",
     .flag = "--block-kv",
     .type = ParamType::kTile,
     .unit = "rows",
     .help = "Key columns per dp tile (bn)",
     .default_value = 128,
     .min = 1,
     .field = field_of<&WorkloadParams::block_kv>()},
    {.name = "block_k",
     .flag = "--block-k",
     .type = ParamType::kTile,
     .unit = "columns",
     .help = "Rows of the reduced dimension per chunk of dv, dq and dk",
     .default_value = 64,
     .min = 1,
     .field = field_of<&WorkloadParams::block_k>()},
    {.name = "softmax_rows",
     .flag = "--softmax-rows",
     .type = ParamType::kTile,
     .unit = "rows",
     .help = "Rows of P and dP per softmax-backward CTA, a warp each",
     .default_value = 4,
     .min = 1,
     .max = 32,
     .max_reason = "one warp per row, at most 1024 threads per CTA",
     .field = field_of<&WorkloadParams::softmax_rows>()},
};

class NaiveBwdPlugin final : public AttentionBackwardPlugin {
 public:
  std::string_view name() const override { return "naive-bwd"; }
  std::string_view summary() const override {
    return "Standard attention's backward, unfused: dv = PᵀdO, dp = dO·Vᵀ, softmax_bwd stores dS, "
           "dq = dS·K, dk = dSᵀQ, with P, dP and dS through global memory; groups' dK, dV summed";
  }
  std::span<const ParamSpec> params() const override { return kParams; }

  void resolve(WorkloadParams& p) const override {
    check_attention_shape(p);
    checked_mul({p.batch_heads(), p.seq, *p.seq_kv, p.element_size(), 4}, "P, dP and dS");
    checked_mul({p.batch_heads(), p.seq, p.head_dim, p.element_size(),
                 ceil_div(*p.seq_kv, *p.block_q) + ceil_div(*p.seq_kv, *p.block_kv)},
                "the dO traffic of naive-bwd");
    checked_mul(
        {p.batch_heads(), *p.seq_kv, p.head_dim, p.element_size(), ceil_div(p.seq, *p.block_q)},
        "the K and V traffic of naive-bwd");
  }

  std::vector<KernelInfo> launches(const WorkloadParams& p) const override {
    const AttentionShape a = attention_shape(p);
    const std::uint64_t d = p.head_dim, s = p.element_size(), bh = a.batch_heads;
    const std::uint64_t bm = *p.block_q, bn = *p.block_kv, bk = *p.block_k;
    const std::uint64_t tkv = ceil_div(a.nkv, bm), tm = ceil_div(a.nq, bm);
    const std::uint64_t rows = std::min<std::uint64_t>(*p.softmax_rows, a.nq);
    // Chunked products keep two stages of their operands; dp one tile of each.
    const std::uint64_t chunked =
        2 * (std::min(bm, a.nkv) * std::min(bk, a.nq) + std::min(bk, a.nq) * d) * s;
    const std::uint64_t chunked_q =
        2 * (std::min(bm, a.nq) * std::min(bk, a.nkv) + std::min(bk, a.nkv) * d) * s;
    const std::uint32_t regs = estimated_registers(bm * d, kMmaThreads);
    std::vector<KernelInfo> out = {
        make_launch("dv", bh * tkv, kMmaThreads, chunked, regs),
        make_launch("dp", bh * tm * ceil_div(a.nkv, bn), kMmaThreads,
                    (std::min(bm, a.nq) + std::min(bn, a.nkv)) * d * s,
                    estimated_registers(bm * bn, kMmaThreads)),
        make_launch("softmax_bwd", bh * ceil_div(a.nq, *p.softmax_rows),
                    static_cast<std::uint32_t>(32 * rows), 2 * rows * a.nkv * s, 32),
        make_launch("dq", bh * tm, kMmaThreads, chunked_q, regs),
        make_launch("dk", bh * tkv, kMmaThreads, chunked, regs),
    };
    if (a.group > 1) {
      // Each CTA holds its block_q × d sums (fp32) in registers, as the CUDA kernel does
      // (models/cuda/naive_backward.cu: ptxas gives it 54, 96, 96 and 232 registers at d, block_q
      // = 64/64, 64/128, 128/64, 128/128, where this estimate gives 64, 96, 96 and 160).
      out.push_back(make_launch("sum_dkv", a.kv_batch_heads() * tkv, kSumThreads, 0,
                                estimated_registers(bm * d, kSumThreads)));
    }
    return out;
  }

  std::unique_ptr<Workload> make(const WorkloadParams& p) const override {
    return std::make_unique<NaiveBwd>(p);
  }

  Traffic closed_form(const WorkloadParams& p) const override { return naive_bwd_traffic(p); }

  SmemAdvice smem_advice(const WorkloadParams& p, const KernelInfo& launch,
                         std::uint64_t limit_bytes) const override {
    if (launch.name != "softmax_bwd") return {"", "block_q/block_kv/block_k", ""};
    const std::uint64_t row = 2 * p.kv_seq() * p.element_size();
    return {"", "softmax_rows (" + std::to_string(*p.softmax_rows) + " rows of P and dP)",
            row <= limit_bytes ? "softmax_rows <= " + std::to_string(limit_bytes / row) + " fits"
                               : "not even one row of P and dP fits"};
  }

  double io_exponent(std::string_view axis) const override {  // Θ(Nd + N²): N² at any M
    return axis == "seq" ? 2.0 : 0.0;
  }
};

}  // namespace

const WorkloadPlugin& naive_bwd_plugin() {
  static const NaiveBwdPlugin plugin;
  return plugin;
}

Traffic naive_bwd_traffic(const WorkloadParams& p) {
  const AttentionShape a = attention_shape(p);
  const std::uint64_t s = p.element_size(), bh = a.batch_heads, nq = a.nq, nkv = a.nkv;
  const std::uint64_t row = p.head_dim * s, score = bh * nq * nkv * s;
  const std::uint64_t tkv = ceil_div(nkv, *p.block_q), tn = ceil_div(nkv, *p.block_kv);
  const std::uint64_t tm = ceil_div(nq, *p.block_q);
  const bool grouped = a.group > 1;
  const std::uint64_t dkv = a.kv_batch_heads() * nkv * row;
  std::vector<TensorTraffic> t = {
      {"Q", bh * nq * row * tkv, 0},
      {"K", bh * nkv * row * tm, 0},
      {"V", bh * nkv * row * tm, 0},
      {"dO", bh * nq * row * (tkv + tn), 0},
      {"P", 2 * score, 0},
      {"dP", score, score},
      {"dS", 2 * score, score},
      {"dQ", 0, bh * nq * row},
      {"dK", 0, dkv},
      {"dV", 0, dkv},
  };
  if (grouped) {
    t.push_back({"dK_expanded", bh * nkv * row, bh * nkv * row});
    t.push_back({"dV_expanded", bh * nkv * row, bh * nkv * row});
  }
  return make_traffic(std::move(t));
}

}  // namespace memwall
