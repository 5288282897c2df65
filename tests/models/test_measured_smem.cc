// Shared memory, load for load: for every kernel that Nsight Compute profiled on the H200
// (traces/measured/h200-smem.csv), the bytes the model puts on the shared-memory pipe equal the
// kernel's ldmatrix + load + store bytes (sm__sass_data_bytes_mem_shared_op_{ldsm,ld,st}).

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "models/model_source.h"
#include "models/workload_params.h"

namespace memwall {
namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, ',')) out.push_back(field);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

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
  std::ifstream in("traces/measured/h200-smem.csv");
  REQUIRE(in);
  std::string line;
  REQUIRE(std::getline(in, line));
  const std::vector<std::string> header = split(line);
  const std::vector<std::string> params = {"workload", "batch", "heads", "seq", "head_dim", "dtype",
                                           "block_q", "block_kv", "block_k", "stages",
                                           "softmax_rows"};
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  int rows = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split(line);
    REQUIRE(f.size() == header.size());
    std::vector<std::pair<std::string, std::string>> named;
    for (const std::string& key : params) {
      if (!f[col.at(key)].empty()) named.emplace_back(key, f[col.at(key)]);
    }
    const std::string kernel = f[col.at("kernel")];
    const std::uint64_t measured = std::stoull(f[col.at("smem_ldsm_bytes")]) +
                                   std::stoull(f[col.at("smem_ld_bytes")]) +
                                   std::stoull(f[col.at("smem_st_bytes")]);
    INFO(line);
    CHECK(model_smem(params_from_named(named)).at(kernel) == measured);
    ++rows;
  }
  CHECK(rows == 10);  // every profiled kernel of the file
}

}  // namespace memwall
