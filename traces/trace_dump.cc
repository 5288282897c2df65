#include "traces/trace_dump.h"

#include <cstdio>
#include <string>
#include <vector>

namespace memwall {
namespace {

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

const char* unit_name(ComputeUnit u) {
  switch (u) {
    case ComputeUnit::tensor: return "tensor";
    case ComputeUnit::fp32: return "fp32";
    case ComputeUnit::sfu: return "sfu";
    case ComputeUnit::issue: return "issue";
    case ComputeUnit::mma_sync: return "mma_sync";
    case ComputeUnit::latency: return "latency";
  }
  return "?";
}

}  // namespace

std::string format_op(const Op& op, const WorkloadInfo& workload) {
  const auto tensor = [&]() {
    return op.tensor < workload.tensors.size() ? workload.tensors[op.tensor].name
                                               : "#" + std::to_string(op.tensor);
  };
  const auto box = [&]() {
    return " base=" + hex(op.box.base) + " rows=" + std::to_string(op.box.rows) +
           " row_bytes=" + std::to_string(op.box.row_bytes) +
           " pitch=" + std::to_string(op.box.pitch);
  };
  switch (op.kind) {
    case OpKind::load: return "load " + tensor() + " tag=" + std::to_string(op.tag) + box();
    case OpKind::store: return "store " + tensor() + box();
    case OpKind::reduce: return "reduce " + tensor() + box();
    case OpKind::wait: return "wait tag=" + std::to_string(op.tag);
    case OpKind::compute:
      return std::string("compute ") + unit_name(op.unit) + " " + std::to_string(op.amount) +
             (op.tag != 0 ? " async tag=" + std::to_string(op.tag) : "");
    case OpKind::smem:
      return "smem " + std::to_string(op.amount) +
             (op.tag != 0 ? " async tag=" + std::to_string(op.tag) : "");
    case OpKind::barrier: return "barrier";
  }
  return "?";
}

std::uint64_t dump_trace(TraceSource& source, std::ostream& out, std::uint64_t op_limit) {
  const WorkloadInfo& w = source.workload();
  out << "workload " << w.name << "\n";
  for (const auto& [key, value] : w.params) out << "param " << key << " = " << value << "\n";
  for (std::size_t i = 0; i < w.tensors.size(); ++i) {
    out << "tensor " << i << " " << w.tensors[i].name << " base=" << hex(w.tensors[i].base)
        << " bytes=" << w.tensors[i].bytes << "\n";
  }
  KernelInfo kernel;
  std::vector<Op> ops;
  std::uint64_t printed = 0;
  std::uint64_t k = 0;
  while (source.next_kernel(kernel)) {
    out << "kernel " << k++ << " " << kernel.name << " ctas=" << kernel.ctas
        << " threads=" << kernel.threads_per_cta << " smem_bytes=" << kernel.smem_bytes_per_cta
        << " registers=" << kernel.registers_per_thread << "\n";
    for (std::uint64_t c = 0; source.next_cta(ops); ++c) {
      out << "  cta " << c << " (" << ops.size() << " ops)\n";
      for (const Op& op : ops) {
        if (op_limit != 0 && printed == op_limit) {
          out << "... stopped after " << op_limit << " ops (--limit 0 prints all)\n";
          return printed;
        }
        out << "    " << format_op(op, w) << "\n";
        ++printed;
      }
    }
  }
  return printed;
}

}  // namespace memwall
