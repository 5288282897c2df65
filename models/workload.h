#pragma once
/// A workload written like GPU kernels: a sequence of launches, each a grid of CTAs whose ops are
/// a function of the CTA index alone (so any CTA can be generated on its own, in constant memory).
/// The same kernel body runs dry (ops only) or on real data (EigenBackend).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "models/backend.h"
#include "models/workload_params.h"
#include "traces/op.h"
#include "traces/recorder.h"

namespace memwall {

/// Alignment of every tensor's base address in bytes (the contract asks for at least 256).
inline constexpr std::uint64_t kTensorAlignment = 256;

class Workload {
 public:
  virtual ~Workload() = default;
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  /// The resolved parameters (every default applied).
  const WorkloadParams& params() const { return m_params; }
  /// Name, parameters (WorkloadParams::named) and tensors with their base addresses and extents.
  const WorkloadInfo& info() const { return m_info; }
  /// The launches in order, each with its grid size and per-CTA resources.
  const std::vector<KernelInfo>& kernels() const { return m_kernels; }

  /// Tensor `id`'s layout: rows × cols elements of `tensor_element_bytes(id)`, row-major, pitch
  /// cols·element bytes. Attention Q/K/V/O: (B·H·N) × d; S/P: (B·H·N) × N; L, ℓ, m: (B·H) × N.
  std::uint64_t tensor_rows(std::uint8_t id) const { return m_rows[id]; }
  std::uint64_t tensor_cols(std::uint8_t id) const { return m_cols[id]; }
  std::uint32_t tensor_element_bytes(std::uint8_t id) const { return m_elem[id]; }
  /// The id of the tensor called `name`; throws UsageError if there is none.
  std::uint8_t tensor_id(const std::string& name) const;

  /// Appends the ops of CTA `cta` of launch `kernel` to `rec`, without data.
  virtual void emit_cta(std::size_t kernel, std::uint64_t cta, Recorder& rec) const = 0;
  /// The same CTA on real data: reads and writes `data`'s tensors and emits the same ops.
  virtual void compute_cta(std::size_t kernel, std::uint64_t cta, EigenBackend& data,
                           Recorder& rec) const = 0;

  /// Data for compute_cta: every tensor zero-sized to its layout; the inputs (those declared with
  /// add_input: Q, K, V or A, B) uniform in [-1, 1] from `seed`.
  EigenBackend make_data(std::uint64_t seed) const;
  /// Runs every CTA of every launch in order on `data` (the ops are discarded).
  void compute_all(EigenBackend& data) const;

  /// Completes the inputs make_data drew at random with those that are functions of them (a
  /// backward pass's O and logsumexp L are the forward's outputs); nothing by default.
  virtual void prepare_inputs(EigenBackend& /*data*/) const {}

 protected:
  explicit Workload(WorkloadParams resolved);
  /// Declares tensor `name` as rows × cols elements of `element_bytes`; returns its id.
  std::uint8_t add_tensor(const char* name, std::uint64_t rows, std::uint64_t cols,
                          std::uint32_t element_bytes);
  /// Declares an input tensor (make_data fills it with random values), as add_tensor.
  std::uint8_t add_input(const char* name, std::uint64_t rows, std::uint64_t cols,
                         std::uint32_t element_bytes);
  void add_kernel(KernelInfo kernel) { m_kernels.push_back(std::move(kernel)); }
  /// A box of tensor `id`: `rows` rows from row `row`, `cols` elements from column `col`.
  Box box(std::uint8_t id, std::uint64_t row, std::uint64_t rows, std::uint64_t col,
          std::uint64_t cols) const;

 private:
  WorkloadParams m_params;
  WorkloadInfo m_info;
  std::vector<KernelInfo> m_kernels;
  std::vector<std::uint64_t> m_rows, m_cols;
  std::vector<std::uint32_t> m_elem;
  std::vector<bool> m_input;
  std::uint64_t m_next_base = 0;
};

/// A Workload whose CTA body is written once, as `Derived::run(kernel, cta, backend, rec)`, a
/// template over the backend: emit_cta runs it on a DryBackend (ops only), compute_cta on the
/// Eigen data. `Derived` befriends this class when `run` is private.
template <class Derived>
class BackendWorkload : public Workload {
 public:
  void emit_cta(std::size_t kernel, std::uint64_t cta, Recorder& rec) const final {
    DryBackend dry;
    static_cast<const Derived&>(*this).run(kernel, cta, dry, rec);
  }
  void compute_cta(std::size_t kernel, std::uint64_t cta, EigenBackend& data,
                   Recorder& rec) const final {
    static_cast<const Derived&>(*this).run(kernel, cta, data, rec);
  }

 protected:
  explicit BackendWorkload(WorkloadParams resolved) : Workload(std::move(resolved)) {}
};

/// Resolves `params` (resolve_workload) and builds its workload (its plugin's make).
std::unique_ptr<Workload> make_workload(const WorkloadParams& params);

/// The launches of a resolved workload (its plugin's), with grids and per-CTA resources (what
/// Workload::kernels returns), without building it.
std::vector<KernelInfo> kernel_launches(const WorkloadParams& resolved);

}  // namespace memwall
