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
      for (Eigen::Index i = 0; i < rows; ++i) {
        // The masked full softmax: keys a row does not see weigh exactly 0.
        const Eigen::Index seen = e(a.keys_visible(i0 + static_cast<std::uint64_t>(i)));
        auto row = s.row(i);
        const double mx = row.head(seen).maxCoeff();
        row.head(seen) = (row.head(seen).array() - mx).exp().matrix();
        row.tail(e(nkv) - seen).setZero();
        row /= row.sum();
      }
      out.middleRows(r + e(i0), rows) = s * vh;
    }
  }
  return out;
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
  const std::uint64_t need = numeric_bytes(*w);
  if (need > max_bytes) {
    throw UsageError("verify computes in double and would need " + format_bytes(Bytes{need}) +
                     " for the tensors of this shape (limit " + format_bytes(Bytes{max_bytes}) +
                     "); choose a smaller seq, head_dim, batch or heads");
  }
  EigenBackend data = w->make_data(seed);
  w->compute_all(data);
  const EigenBackend::Matrix ref = reference_output(*w, data);
  const std::uint8_t out = output_tensor(*w);
  VerifyResult r;
  r.output = w->info().tensors[out].name;
  r.elements = static_cast<std::uint64_t>(ref.size());
  r.max_abs_error = (data.t(out) - ref).cwiseAbs().maxCoeff();
  if (!data.t(out).allFinite()) r.max_abs_error = std::numeric_limits<double>::infinity();
  return r;
}

}  // namespace memwall
