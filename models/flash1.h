#pragma once
/// The flash1 workload (see docs/models.md for its kernels, tiling and traffic).

#include <memory>

#include "models/workload.h"

namespace memwall {

/// Builds the flash1 workload from resolved parameters (resolve_workload).
std::unique_ptr<Workload> make_flash1(const WorkloadParams& resolved);

}  // namespace memwall
