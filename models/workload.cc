#include "models/workload.h"

#include <algorithm>

#include "models/workload_registry.h"
#include "sim/core/error.h"
#include "sim/core/interrupt.h"

namespace memwall {

std::vector<KernelInfo> kernel_launches(const WorkloadParams& p) {
  return workload_plugin(p.workload).launches(p);
}

Workload::Workload(WorkloadParams resolved) : m_params(std::move(resolved)) {
  m_info.name = std::string(to_string(m_params.workload));
  m_info.params = m_params.named();
  m_kernels = kernel_launches(m_params);
}

std::uint8_t Workload::add_tensor(const char* name, std::uint64_t rows, std::uint64_t cols,
                                  std::uint32_t element_bytes) {
  TensorInfo t;
  t.name = name;
  t.base = m_next_base;
  t.bytes = rows * cols * element_bytes;
  m_next_base += ceil_div(std::max<std::uint64_t>(t.bytes, 1), kTensorAlignment) * kTensorAlignment;
  m_info.tensors.push_back(t);
  m_rows.push_back(rows);
  m_cols.push_back(cols);
  m_elem.push_back(element_bytes);
  m_input.push_back(false);
  return static_cast<std::uint8_t>(m_info.tensors.size() - 1);
}

std::uint8_t Workload::add_input(const char* name, std::uint64_t rows, std::uint64_t cols,
                                 std::uint32_t element_bytes) {
  const std::uint8_t id = add_tensor(name, rows, cols, element_bytes);
  m_input[id] = true;
  return id;
}

std::uint8_t Workload::tensor_id(const std::string& name) const {
  for (std::size_t i = 0; i < m_info.tensors.size(); ++i) {
    if (m_info.tensors[i].name == name) return static_cast<std::uint8_t>(i);
  }
  throw UsageError("workload " + m_info.name + " has no tensor \"" + name + "\"");
}

Box Workload::box(std::uint8_t id, std::uint64_t row, std::uint64_t rows, std::uint64_t col,
                  std::uint64_t cols) const {
  Box b;
  const std::uint64_t pitch = m_cols[id] * m_elem[id];
  b.base = m_info.tensors[id].base + row * pitch + col * m_elem[id];
  b.rows = static_cast<std::uint32_t>(rows);
  b.row_bytes = static_cast<std::uint32_t>(cols * m_elem[id]);
  b.pitch = pitch;
  return b;
}

EigenBackend Workload::make_data(std::uint64_t seed) const {
  EigenBackend data;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (std::size_t i = 0; i < m_info.tensors.size(); ++i) {
    EigenBackend::Matrix m = EigenBackend::Matrix::Zero(static_cast<Eigen::Index>(m_rows[i]),
                                                        static_cast<Eigen::Index>(m_cols[i]));
    if (m_input[i]) {
      for (Eigen::Index r = 0; r < m.rows(); ++r) {
        // Filling the inputs of a large shape takes seconds under the sanitizers: poll per row.
        if ((r & 0xFF) == 0) throw_if_interrupted();
        for (Eigen::Index c = 0; c < m.cols(); ++c) m(r, c) = uniform(rng);
      }
    }
    data.tensors.push_back(std::move(m));
  }
  prepare_inputs(data);
  return data;
}

void Workload::compute_all(EigenBackend& data) const {
  std::vector<Op> ops;
  for (std::size_t k = 0; k < m_kernels.size(); ++k) {
    for (std::uint64_t c = 0; c < m_kernels[k].ctas; ++c) {
      throw_if_interrupted();
      ops.clear();
      Recorder rec(ops);
      compute_cta(k, c, data, rec);
    }
  }
}

std::unique_ptr<Workload> make_workload(const WorkloadParams& params) {
  const WorkloadParams p = resolve_workload(params);
  return workload_plugin(p.workload).make(p);
}

}  // namespace memwall
