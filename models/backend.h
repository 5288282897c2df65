#pragma once
/// The two backends one kernel body runs on. Kernels are templates on the backend: every op is
/// emitted the same way on both; the tile arithmetic sits in `if constexpr (Backend::kNumeric)`
/// blocks, so the dry backend (sizes too large to compute) costs only the op emission.

#include <cstdint>
#include <vector>

#include <Eigen/Dense>

namespace memwall {

/// Emits ops only; holds no data.
struct DryBackend {
  static constexpr bool kNumeric = false;
};

/// Real data in double precision. Tensor `t` of a workload is one matrix laid out exactly like its
/// bytes in global memory: Workload::tensor_rows(t) rows × tensor_cols(t) columns, so a box of
/// rows × row_bytes at (row, col_byte) is the block (row, col_byte / element size).
struct EigenBackend {
  static constexpr bool kNumeric = true;
  using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  std::vector<Matrix> tensors;  ///< indexed by tensor id

  Matrix& t(std::uint8_t id) { return tensors[id]; }
  const Matrix& t(std::uint8_t id) const { return tensors[id]; }
};

}  // namespace memwall
