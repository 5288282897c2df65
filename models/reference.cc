#include "models/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/attention_params.h"
#include "models/workload_registry.h"
#include "sim/core/error.h"
#include "sim/core/interrupt.h"
#include "sim/core/units.h"

namespace memwall {

std::uint8_t output_tensor(const Workload& workload) {
  const WorkloadPlugin& plugin = workload_plugin(workload.params().workload);
  return workload.tensor_id(std::string(plugin.output_tensor()));
}

EigenBackend::Matrix reference_output(const Workload& workload, const EigenBackend& data) {
  return workload_plugin(workload.params().workload).reference_output(workload, data);
}

void masked_softmax_rows(EigenBackend::Matrix& scores, const AttentionShape& a, std::uint64_t row0,
                         Eigen::VectorXd* lse) {
  if (lse != nullptr) lse->resize(scores.rows());
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    const auto seen =
        static_cast<Eigen::Index>(a.keys_visible(row0 + static_cast<std::uint64_t>(i)));
    auto row = scores.row(i);
    const double mx = row.head(seen).maxCoeff();
    row.head(seen) = (row.head(seen).array() - mx).exp().matrix();
    row.tail(scores.cols() - seen).setZero();
    const double sum = row.sum();
    row /= sum;
    if (lse != nullptr) (*lse)(i) = mx + std::log(sum);
  }
}

EigenBackend::Matrix attention_reference(const Workload& workload, const EigenBackend& data) {
  using Matrix = EigenBackend::Matrix;
  const AttentionShape a = attention_shape(workload.params());
  const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
  const std::uint64_t nq = a.nq, nkv = a.nkv;
  const double scale = 1.0 / std::sqrt(static_cast<double>(a.d));
  const Matrix& q = data.t(workload.tensor_id("Q"));
  const Matrix& k = data.t(workload.tensor_id("K"));
  const Matrix& v = data.t(workload.tensor_id("V"));
  // Rows of S at a time: at most 256, and at most 8 Mi doubles (64 MiB) of S, so that memory
  // stays a small multiple of the tensors' and Ctrl-C is polled every block.
  const std::uint64_t block = std::clamp<std::uint64_t>((std::uint64_t{1} << 23) / nkv, 1, 256);
  Matrix out(q.rows(), q.cols());
  for (std::uint64_t bh = 0; bh < a.batch_heads; ++bh) {
    const Eigen::Index r = e(bh * nq);
    const auto kh = k.middleRows(e(a.kv_head(bh) * nkv), e(nkv));
    const auto vh = v.middleRows(e(a.kv_head(bh) * nkv), e(nkv));
    for (std::uint64_t i0 = 0; i0 < nq; i0 += block) {
      throw_if_interrupted();
      const Eigen::Index rows = e(std::min(block, nq - i0));
      Matrix s = scale * q.middleRows(r + e(i0), rows) * kh.transpose();
      masked_softmax_rows(s, a, i0);  // the masked full softmax
      out.middleRows(r + e(i0), rows) = s * vh;
    }
  }
  return out;
}

std::vector<EigenBackend::Matrix> attention_grad_reference(const Workload& workload,
                                                           const EigenBackend& data) {
  using Matrix = EigenBackend::Matrix;
  const AttentionShape a = attention_shape(workload.params());
  const auto e = [](std::uint64_t x) { return static_cast<Eigen::Index>(x); };
  const double scale = 1.0 / std::sqrt(static_cast<double>(a.d));
  const Matrix& q = data.t(workload.tensor_id("Q"));
  const Matrix& k = data.t(workload.tensor_id("K"));
  const Matrix& v = data.t(workload.tensor_id("V"));
  const Matrix& dout = data.t(workload.tensor_id("dO"));
  Matrix dq = Matrix::Zero(q.rows(), q.cols());
  Matrix dk = Matrix::Zero(k.rows(), k.cols()), dv = Matrix::Zero(v.rows(), v.cols());
  for (std::uint64_t bh = 0; bh < a.batch_heads; ++bh) {
    throw_if_interrupted();
    const Eigen::Index qr = e(bh * a.nq), kr = e(a.kv_head(bh) * a.nkv);
    const auto qh = q.middleRows(qr, e(a.nq));
    const auto kh = k.middleRows(kr, e(a.nkv));
    const auto vh = v.middleRows(kr, e(a.nkv));
    const auto doh = dout.middleRows(qr, e(a.nq));
    Matrix p = scale * qh * kh.transpose();
    masked_softmax_rows(p, a, 0);
    const Matrix dp = doh * vh.transpose();
    const Eigen::VectorXd rowsum = dp.cwiseProduct(p).rowwise().sum();
    const Matrix ds = p.cwiseProduct(dp.colwise() - rowsum);
    dq.middleRows(qr, e(a.nq)) = scale * ds * kh;
    dk.middleRows(kr, e(a.nkv)) += scale * ds.transpose() * qh;
    dv.middleRows(kr, e(a.nkv)) += p.transpose() * doh;
  }
  return {dq, dk, dv};
}

std::uint64_t numeric_bytes(const Workload& workload) {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < workload.info().tensors.size(); ++i) {
    const auto id = static_cast<std::uint8_t>(i);
    const double b = 8.0 * static_cast<double>(workload.tensor_rows(id)) *
                     static_cast<double>(workload.tensor_cols(id));
    if (b > 1e18) return ~std::uint64_t{0};
    total += workload.tensor_rows(id) * workload.tensor_cols(id) * 8;
  }
  return total;
}

VerifyResult verify_workload(const WorkloadParams& params, std::uint64_t seed,
                             std::uint64_t max_bytes) {
  const std::unique_ptr<Workload> w = make_workload(params);
  const WorkloadPlugin& plugin = workload_plugin(w->params().workload);
  const std::uint64_t need = numeric_bytes(*w);
  if (need > max_bytes) {
    throw UsageError("verify computes in double and would need " + format_bytes(Bytes{need}) +
                     " for the tensors of this shape (limit " + format_bytes(Bytes{max_bytes}) +
                     "); choose a smaller seq, head_dim, batch or heads");
  }
  EigenBackend data = w->make_data(seed);
  w->compute_all(data);
  const std::vector<EigenBackend::Matrix> refs = plugin.reference_outputs(*w, data);
  const std::vector<std::string_view> names = plugin.output_tensors();
  VerifyResult r;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::uint8_t out = w->tensor_id(std::string(names[i]));
    r.output += (i ? ", " : "") + std::string(names[i]);
    r.elements += static_cast<std::uint64_t>(refs[i].size());
    const double err = data.t(out).allFinite() ? (data.t(out) - refs[i]).cwiseAbs().maxCoeff()
                                               : std::numeric_limits<double>::infinity();
    r.max_abs_error = std::max(r.max_abs_error, err);
  }
  return r;
}

}  // namespace memwall
