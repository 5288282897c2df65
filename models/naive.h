#pragma once
/// The naive workload (see docs/models.md for its kernels, tiling and traffic).

#include <memory>

#include "models/workload.h"

namespace memwall {

/// Builds the naive workload from resolved parameters (resolve_workload).
std::unique_ptr<Workload> make_naive(const WorkloadParams& resolved);

}  // namespace memwall
