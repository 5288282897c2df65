#include "models/closed_forms.h"

#include "models/workload_registry.h"

namespace memwall {

const TensorTraffic* Traffic::find(const std::string& tensor) const {
  for (const TensorTraffic& t : by_tensor) {
    if (t.tensor == tensor) return &t;
  }
  return nullptr;
}

Traffic make_traffic(std::vector<TensorTraffic> tensors) {
  Traffic t;
  t.by_tensor = std::move(tensors);
  for (const TensorTraffic& x : t.by_tensor) {
    t.read_bytes += x.read_bytes;
    t.write_bytes += x.write_bytes;
  }
  return t;
}

Traffic closed_form_traffic(const WorkloadParams& params) {
  const WorkloadParams p = resolve_workload(params);
  return workload_plugin(p.workload).closed_form(p);
}

Traffic algorithm0_traffic(std::uint64_t bh, std::uint64_t n, std::uint64_t d, std::uint32_t s) {
  const std::uint64_t nd = bh * n * d * s, nn = bh * n * n * s;
  return make_traffic(
      {{"Q", nd, 0}, {"K", nd, 0}, {"V", nd, 0}, {"S", nn, nn}, {"P", nn, nn}, {"O", 0, nd}});
}

}  // namespace memwall
