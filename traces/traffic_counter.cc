#include "traces/traffic_counter.h"

#include "sim/core/interrupt.h"

namespace memwall {

TraceCounts count_traffic(TraceSource& source) {
  TraceCounts out;
  for (const TensorInfo& t : source.workload().tensors) out.by_tensor.push_back({t.name, 0, 0});
  KernelInfo kernel;
  std::vector<Op> ops;
  while (source.next_kernel(kernel)) {
    KernelCount k;
    k.name = kernel.name;
    while (source.next_cta(ops)) {
      throw_if_interrupted();
      ++k.ctas;
      k.ops += ops.size();
      for (const Op& op : ops) {
        if (op.kind == OpKind::load) {
          k.read_bytes += op.box.bytes();
          if (op.tensor < out.by_tensor.size())
            out.by_tensor[op.tensor].read_bytes += op.box.bytes();
        } else if (writes_global(op.kind)) {
          k.write_bytes += op.box.bytes();
          if (op.tensor < out.by_tensor.size())
            out.by_tensor[op.tensor].write_bytes += op.box.bytes();
        }
      }
    }
    out.read_bytes += k.read_bytes;
    out.write_bytes += k.write_bytes;
    out.ctas += k.ctas;
    out.ops += k.ops;
    out.kernels.push_back(std::move(k));
  }
  return out;
}

}  // namespace memwall
