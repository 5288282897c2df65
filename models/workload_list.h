#pragma once
/// The registered workloads, one `X(name)` line each, in their fixed order: the order of
/// `memwall workloads`, of --help, of docs/workloads.md and of "known: ..." in error messages.
///
/// Registering a workload is its line here. Its file pair models/NAME.{h,cc} defines
/// `const WorkloadPlugin& NAME_plugin()` (models/workload_plugin.h); the line gives it the
/// enumerator WorkloadKind::NAME (models/workload_params.h) and its place in the registry
/// (models/workload_registry.h). NAME must be the plugin's name(), with '-' spelled '_'
/// ("flash2-bwd" is flash2_bwd).
#define MEMWALL_WORKLOADS(X) \
  X(naive)                   \
  X(flash1)                  \
  X(flash2)                  \
  X(gemm)                    \
  X(naive_bwd)               \
  X(flash2_bwd)              \
  X(flash3)
