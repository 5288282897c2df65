#include "models/model_source.h"

#include "models/workload.h"

namespace memwall {
namespace {

class ModelSource final : public TraceSource {
 public:
  explicit ModelSource(std::unique_ptr<Workload> workload) : m_workload(std::move(workload)) {}

  const WorkloadInfo& workload() const override { return m_workload->info(); }

  bool next_kernel(KernelInfo& kernel) override {
    const auto& kernels = m_workload->kernels();
    if (m_started) ++m_kernel;
    m_started = true;
    m_cta = 0;
    if (m_kernel >= kernels.size()) return false;
    kernel = kernels[m_kernel];
    return true;
  }

  bool next_cta(std::vector<Op>& ops) override {
    ops.clear();
    const auto& kernels = m_workload->kernels();
    if (!m_started || m_kernel >= kernels.size() || m_cta >= kernels[m_kernel].ctas) return false;
    Recorder rec(ops, m_max_cta_ops);
    m_workload->emit_cta(m_kernel, m_cta, rec);
    ++m_cta;
    return true;
  }

 private:
  std::unique_ptr<Workload> m_workload;
  std::size_t m_kernel = 0;
  std::uint64_t m_cta = 0;
  bool m_started = false;
};

}  // namespace

std::unique_ptr<TraceSource> make_model_source(const WorkloadParams& params) {
  return std::make_unique<ModelSource>(make_workload(params));
}

}  // namespace memwall
