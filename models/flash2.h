#pragma once
/// The flash2 workload (see docs/models.md for its kernels, tiling and traffic).

#include <memory>

#include "models/workload.h"

namespace memwall {

/// Builds the flash2 workload from resolved parameters (resolve_workload).
std::unique_ptr<Workload> make_flash2(const WorkloadParams& resolved);

}  // namespace memwall
