// Shared memory, load for load: for every kernel that Nsight Compute profiled on the H200
// (traces/measured/h200-smem.csv), the bytes the model puts on the shared-memory pipe equal the
// kernel's ldmatrix + load + store bytes (sm__sass_data_bytes_mem_shared_op_{ldsm,ld,st}).

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "models/model_source.h"
#include "models/workload_params.h"
#include "studies/sweep_csv.h"
#include "tests/studies/measured_rows.h"

namespace memwall {
namespace {

/// Shared-memory bytes of each kernel of the model, from its ops.
std::map<std::string, std::uint64_t> model_smem(const WorkloadParams& p) {
  std::map<std::string, std::uint64_t> out;
  auto source = make_model_source(p);
  KernelInfo info;
  std::vector<Op> ops;
  while (source->next_kernel(info)) {
    std::uint64_t& bytes = out[info.name];
    while (source->next_cta(ops)) {
      for (const Op& op : ops) {
        if (op.kind == OpKind::smem) bytes += op.amount;
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("The models' shared-memory bytes are the kernels' as ncu counted them on the H200",
          "[smem][measured]") {
  const CsvTable csv = read_csv("traces/measured/h200-smem.csv");
  const auto cell = [&](const std::vector<std::string>& row, const char* name) {
    return std::stoull(test::measured_cell(csv, row, name));
  };
  int rows = 0;
  for (const std::vector<std::string>& row : csv.rows) {
    const std::uint64_t measured =
        cell(row, "smem_ldsm_bytes") + cell(row, "smem_ld_bytes") + cell(row, "smem_st_bytes");
    INFO(csv_line(row));
    CHECK(model_smem(test::measured_params(csv, row)).at(test::measured_cell(csv, row, "kernel")) ==
          measured);
    ++rows;
  }
  CHECK(rows == 10);  // every profiled kernel of the file
}

}  // namespace memwall
