#pragma once
/// Closed forms of the workloads' global-memory traffic: bytes read and written in total and per
/// tensor, as functions of the parameters. Each workload's own formula lives in its file pair
/// (naive_traffic in models/naive.h, ...); they equal, exactly, the sums over the ops the kernels
/// emit (tests/models check it); docs/models.md derives each one.

#include <cstdint>
#include <string>
#include <vector>

#include "models/workload_params.h"

namespace memwall {

/// Global bytes read and written of one tensor.
struct TensorTraffic {
  std::string tensor;  ///< the tensor's name ("Q", "S", "L", ...)
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
};

/// Global bytes read and written by a whole workload (all launches, all heads).
struct Traffic {
  std::uint64_t read_bytes = 0;  ///< sum of by_tensor[].read_bytes
  std::uint64_t write_bytes = 0;  ///< sum of by_tensor[].write_bytes
  std::vector<TensorTraffic> by_tensor;  ///< in the workload's tensor order (its WorkloadInfo)

  /// The entry of `tensor`, or nullptr.
  const TensorTraffic* find(const std::string& tensor) const;
};

/// A Traffic of `tensors`, with the totals summed.
Traffic make_traffic(std::vector<TensorTraffic> tensors);

/// The traffic of any workload (its plugin's closed form); `params` is resolved first
/// (defaults, validation).
Traffic closed_form_traffic(const WorkloadParams& params);

/// Algorithm 0 (standard attention, S and P materialised) for `batch_heads` heads of N×d, element
/// size s: per head reads 3Nd + 2N² elements (Q, K, V, S, P), writes 2N² + Nd (S, P, O).
Traffic algorithm0_traffic(std::uint64_t batch_heads, std::uint64_t seq, std::uint64_t head_dim,
                           std::uint32_t element_bytes);

}  // namespace memwall
