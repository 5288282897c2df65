#pragma once
/// The gemm workload (see docs/models.md for its kernels, tiling and traffic).

#include <memory>

#include "models/workload.h"

namespace memwall {

/// Builds the gemm workload from resolved parameters (resolve_workload).
std::unique_ptr<Workload> make_gemm(const WorkloadParams& resolved);

}  // namespace memwall
