#pragma once
/// What a workload is, in one place. A plugin declares its name, summary and parameters; resolves
/// and checks them; and gives its launches (grid, threads, shared memory, registers), its op
/// stream (the Workload it builds), its closed-form traffic, what to say when a launch's shared
/// memory does not fit, and the plain reference `memwall verify` compares with.
///
/// Each workload's file pair (models/naive.{h,cc}, ...) defines one plugin and registers it with
/// one line in models/workload_list.h. resolve_workload, make_workload, closed_form_traffic,
/// kernel_launches, the CLI's workload flags, `memwall workloads` and docs/workloads.md all go
/// through the registry (models/workload_registry.h), so none of them lists the workloads.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/backend.h"
#include "models/closed_forms.h"
#include "models/param_spec.h"
#include "models/spill.h"
#include "models/workload_params.h"
#include "traces/op.h"

namespace memwall {

class Workload;

/// What a plugin says when a launch needs more shared memory per CTA than the limit; the
/// message reads "kernel K needs X (N B = formula) ... ; reduce `reduce`; `fits`".
struct SmemAdvice {
  std::string
      formula;  ///< how the bytes add up, e.g. "(block_q 128 + 2·block_kv 64)·..."; may be empty
  std::string reduce;  ///< the parameters that set it, e.g. "block_q/block_kv/stages"
  std::string
      fits;  ///< what would fit under the limit, e.g. "softmax_rows <= 3 fits"; may be empty
};

/// One workload. Plugins are stateless singletons; every method is a function of its arguments.
class WorkloadPlugin {
 public:
  virtual ~WorkloadPlugin() = default;

  /// The name on the command line, in trace headers and in reports ("flash2").
  virtual std::string_view name() const = 0;
  /// One line for `memwall workloads` and docs/workloads.md.
  virtual std::string_view summary() const = 0;
  /// Its parameters (the workload selector excluded), in the order trace headers list them.
  virtual std::span<const ParamSpec> params() const = 0;

  /// Completes resolution after the generic steps (other workloads' parameters cleared, each
  /// given value checked against its bounds, fixed defaults filled): derived defaults and every
  /// check that involves more than one parameter. Throws UsageError naming the parameter.
  virtual void resolve(WorkloadParams& p) const = 0;
  /// The launches of resolved `p` in order, with grids and per-CTA resources.
  virtual std::vector<KernelInfo> launches(const WorkloadParams& p) const = 0;
  /// Builds the workload of resolved `p`: its tensors and the op stream of every CTA.
  virtual std::unique_ptr<Workload> make(const WorkloadParams& p) const = 0;
  /// The global traffic of resolved `p` in closed form (equal to the sum over its ops).
  virtual Traffic closed_form(const WorkloadParams& p) const = 0;
  /// What to reduce, and what would fit, when `launch` of resolved `p` needs more shared memory
  /// per CTA than `limit_bytes`.
  virtual SmemAdvice smem_advice(const WorkloadParams& p, const KernelInfo& launch,
                                 std::uint64_t limit_bytes) const = 0;
  /// How resolved `p` spills tiles to global memory (models/spill.h); inactive unless the
  /// workload can spill and allow_spill asks for it.
  virtual SpillPlan spill_plan(const WorkloadParams& /*p*/) const { return {}; }

  /// The exponent Theorem 2 (attention) or Hong–Kung (gemm) predicts for the workload's global
  /// traffic against `axis` — "seq" (N, or m = n = k) or "sram_bytes" (the on-chip memory M) —
  /// what `memwall io` fits its simulated bytes against.
  virtual double io_exponent(std::string_view axis) const = 0;

  /// `memwall io`'s defaults for one point, before resolution: with the IO axis `seq` given
  /// (`seq_given`), gemm's m = n = k = seq; with the on-chip memory M of Theorem 2 given
  /// (`sram_bytes`), the tiles it implies where `p` has none; without it, flash1's M is
  /// `smem_per_block` (the config's). Nothing by default.
  virtual void io_defaults(WorkloadParams& /*p*/, bool /*seq_given*/,
                           std::optional<std::uint64_t> /*sram_bytes*/,
                           std::uint64_t /*smem_per_block*/) const {}
  /// The tiling of resolved `p` as `memwall traffic` prints it ("Br = 128, Bc = 64"); by
  /// default the tile parameters' names and values ("tile_m = 128, tile_n = 128").
  virtual std::string tiling_text(const WorkloadParams& p) const;

  /// The tensor `memwall verify` compares ("O", "C"); with several, the first.
  virtual std::string_view output_tensor() const = 0;
  /// That tensor computed plainly (no tiling) from `data`'s inputs, for `workload` built by make.
  virtual EigenBackend::Matrix reference_output(const Workload& workload,
                                                const EigenBackend& data) const = 0;
  /// Every tensor `memwall verify` compares (a backward pass: dQ, dK, dV); by default the one.
  virtual std::vector<std::string_view> output_tensors() const { return {output_tensor()}; }
  /// Their plain references, in that order.
  virtual std::vector<EigenBackend::Matrix> reference_outputs(const Workload& workload,
                                                              const EigenBackend& data) const {
    return {reference_output(workload, data)};
  }
};

}  // namespace memwall
