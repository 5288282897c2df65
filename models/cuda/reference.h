#pragma once
/// The CPU reference for one query row of attention, in double precision, from the same fp16
/// inputs the kernels read (converted exactly to float by the caller).

#include <vector>

namespace memwall::cuda {

/// One row of the reference: o = softmax(scale·q·Kᵀ)·V and its logsumexp (natural log).
struct ReferenceRow {
  std::vector<double> out;  ///< head_dim values
  double logsumexp = 0.0;  ///< ln Σ_j exp(scale·q·k_j)
};

/// Computes the reference for query `q` (head_dim values) against `keys` and `values`
/// ([seq][head_dim] each, row-major) of the same head.
ReferenceRow attention_row_reference(const float* q, const float* keys, const float* values,
                                     int seq, int head_dim, double scale);

}  // namespace memwall::cuda
