#pragma once
/// The plain references the kernels are checked against, and the check itself (`memwall verify`):
/// attention as softmax(scale·QKᵀ)V per head with scale = 1/√d, gemm as A·B, in double.

#include <cstdint>
#include <string>
#include <vector>

#include "models/attention_params.h"
#include "models/backend.h"
#include "models/workload.h"

namespace memwall {

/// The reference output of `workload` from `data`'s inputs (its plugin's reference_output):
/// O ((B·H·N) × d) or C (m × n).
EigenBackend::Matrix reference_output(const Workload& workload, const EigenBackend& data);

/// Attention's plain reference, for the attention plugins: O = softmax(scale·QKᵀ + mask)V per
/// query head with scale = 1/√d, its K/V head's keys (grouped-query attention) and the causal
/// mask's hidden keys weighing 0, from the tensors Q, K, V of `workload` in `data`.
EigenBackend::Matrix attention_reference(const Workload& workload, const EigenBackend& data);

/// The gradients {dQ, dK, dV} of O = softmax(scale·QKᵀ + mask)V for upstream gradient dO, from
/// the tensors Q, K, V, dO of `workload` in `data`, derived plainly per query head: P the masked
/// softmax, dV = PᵀdO, dP = dO·Vᵀ, dS = P∘(dP − rowsum(dP∘P)), dQ = scale·dS·K,
/// dK = scale·dSᵀQ — dK and dV summed over the query heads of each K/V head.
std::vector<EigenBackend::Matrix> attention_grad_reference(const Workload& workload,
                                                           const EigenBackend& data);

/// Replaces each row of `scores` — scale·QKᵀ for the query rows from `row0` of one head of shape
/// `a` — by its softmax over the keys the row sees, the hidden keys weighing exactly 0; with
/// `lse`, writes each row's logsumexp into it (resized to the rows).
void masked_softmax_rows(EigenBackend::Matrix& scores, const AttentionShape& a, std::uint64_t row0,
                         Eigen::VectorXd* lse = nullptr);

/// The id of the workload's output tensor (its plugin's output_tensor: "O" or "C").
std::uint8_t output_tensor(const Workload& workload);

/// Bytes of double-precision storage compute_all needs for `workload`.
std::uint64_t numeric_bytes(const Workload& workload);

/// What verify_workload found.
struct VerifyResult {
  std::string output;  ///< the tensors compared ("O", "C", "dQ, dK, dV")
  std::uint64_t elements = 0;  ///< elements compared, over all of them
  double max_abs_error = 0.0;  ///< max |kernel − reference| over them
};

/// Runs every CTA of `params`' workload on random inputs (uniform in [-1, 1], from `seed`) with
/// the Eigen backend and compares its output with reference_output. Throws UsageError when the
/// double-precision tensors would exceed `max_bytes` (default 4 GiB).
VerifyResult verify_workload(const WorkloadParams& params, std::uint64_t seed = 1,
                             std::uint64_t max_bytes = std::uint64_t{4} << 30);

}  // namespace memwall
