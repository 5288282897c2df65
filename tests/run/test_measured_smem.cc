// Shared memory, load for load: for every kernel that Nsight Compute profiled on the H200
// (traces/measured/h200-smem.csv), the bytes the model puts on the shared-memory pipe equal the
// kernel's ldmatrix + load + store bytes (sm__sass_data_bytes_mem_shared_op_{ldsm,ld,st}).

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/model_source.h"
#include "models/workload_params.h"
#include "sim/run/sweep_csv.h"

namespace memwall {
namespace {

/// Shared-memory bytes of each kernel of the model, from its ops.
std::map<std::string, std::uint64_t> model_smem(const WorkloadParams& p) {
  std::map<std::string, std::uint64_t> out;
  auto source = make_model_source(resolve_workload(p));
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
  const std::vector<std::string> params = {"workload", "batch", "heads", "seq", "head_dim", "dtype",
                                           "block_q", "block_kv", "block_k", "stages",
                                           "softmax_rows"};
  const auto cell = [&](const std::vector<std::string>& row, const char* name) {
    const int c = csv.column(name);
    REQUIRE(c >= 0);
    return row[static_cast<std::size_t>(c)];
  };
  int rows = 0;
  for (const std::vector<std::string>& row : csv.rows) {
    std::vector<std::pair<std::string, std::string>> named;
    for (const std::string& key : params) {
      if (!cell(row, key.c_str()).empty()) named.emplace_back(key, cell(row, key.c_str()));
    }
    const std::uint64_t measured = std::stoull(cell(row, "smem_ldsm_bytes")) +
                                   std::stoull(cell(row, "smem_ld_bytes")) +
                                   std::stoull(cell(row, "smem_st_bytes"));
    INFO(csv_line(row));
    CHECK(model_smem(params_from_named(named)).at(cell(row, "kernel")) == measured);
    ++rows;
  }
  CHECK(rows == 10);  // every profiled kernel of the file
}

}  // namespace memwall
