#include "traces/copy_trace.h"

#include <vector>

#include "sim/core/interrupt.h"

namespace memwall {

CopyStats copy_trace(TraceSource& source, TraceSink& sink) {
  CopyStats stats;
  sink.begin(source.workload());
  KernelInfo kernel;
  std::vector<Op> ops;
  while (source.next_kernel(kernel)) {
    sink.kernel(kernel);
    ++stats.kernels;
    while (source.next_cta(ops)) {
      throw_if_interrupted();  // Ctrl-C: unwind, so an unfinished output file is removed
      sink.cta_begin();
      for (const Op& op : ops) sink.op(op);
      sink.cta_end();
      ++stats.ctas;
      stats.ops += ops.size();
    }
  }
  sink.end();
  return stats;
}

}  // namespace memwall
