// The registers per thread of the kernels models/cuda compiles: the table the models use equals
// models/cuda/ptxas-registers.txt (what models/cuda/ptxas_registers.sh prints from ptxas), and a
// kernel launch uses it exactly when the shape is a compiled instantiation.

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "models/compiled_registers.h"
#include "models/workload.h"
#include "models/workload_params.h"
#include "tests/models/closed_form_check.h"

namespace memwall {
namespace {

using Row = std::tuple<std::string, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t,
                       std::uint32_t>;

WorkloadParams shape(WorkloadKind kind, std::uint64_t seq, std::uint64_t d, std::uint32_t bq,
                     std::uint32_t bkv) {
  return resolve_workload(test::attention(kind, seq, d, bq, bkv));
}

const KernelInfo& launch_named(const std::vector<KernelInfo>& ks, const std::string& name) {
  const auto it =
      std::find_if(ks.begin(), ks.end(), [&](const KernelInfo& k) { return k.name == name; });
  REQUIRE(it != ks.end());
  return *it;
}

}  // namespace

/// The rows of a committed ptxas list (models/cuda/ptxas-registers*.txt), and its header line.
std::set<Row> ptxas_list(const std::string& path, std::string& header) {
  std::ifstream in(path);
  REQUIRE(in);
  std::set<Row> file;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] == '#') {  // the header names the architecture and the nvcc release
      header = line;
      continue;
    }
    std::istringstream fields(line);
    Row r;
    fields >> std::get<0>(r) >> std::get<1>(r) >> std::get<2>(r) >> std::get<3>(r) >>
        std::get<4>(r) >> std::get<5>(r);
    REQUIRE(fields);
    file.insert(r);
  }
  return file;
}

TEST_CASE("Each architecture's compiled-register table is its committed ptxas list",
          "[registers]") {
  for (const auto& [arch, path] : {std::pair{90u, "models/cuda/ptxas-registers.txt"},
                                   std::pair{80u, "models/cuda/ptxas-registers-sm80.txt"}}) {
    INFO(path);
    std::string header;
    const std::set<Row> file = ptxas_list(path, header);
    CHECK(header.rfind("# ptxas -v, sm_" + std::to_string(arch) + ",", 0) == 0);
    std::set<Row> table;
    for (const CompiledKernel& k : compiled_kernels(arch)) {
      table.insert(
          Row{std::string(k.kernel), k.head_dim, k.block_a, k.block_b, k.stages, k.registers});
    }
    CHECK(table == file);
    CHECK(table.size() == compiled_kernels(arch).size());  // no instantiation listed twice
  }
  CHECK(compiled_kernels(89).empty());  // nobody compiled the kernels for sm_89
}

TEST_CASE("A workload takes the register counts of the architecture it is compiled for",
          "[registers]") {
  // qk <64, 128, 128> has 120 registers on sm_90 and 105 on sm_80 (ptxas); on sm_89, which has no
  // compiled list, the estimate: 32 + the 128 x 128 S accumulators over 256 threads.
  WorkloadParams p = test::attention(WorkloadKind::naive, 2048, 64, 128, 128);
  const auto regs_on = [&](std::uint32_t arch) {
    p.arch = arch;
    return launch_named(kernel_launches(resolve_workload(p)), "qk").registers_per_thread;
  };
  CHECK(regs_on(90) == *compiled_registers(90, "qk", 64, 128, 128, 0));
  CHECK(regs_on(80) == *compiled_registers(80, "qk", 64, 128, 128, 0));
  CHECK(regs_on(90) != regs_on(80));
  CHECK(regs_on(89) == 32 + 128 * 128 / 256);
}

TEST_CASE("A compiled shape launches with ptxas's registers, any other with the estimate",
          "[registers]") {
  // flash2 <128, 64, 64, 2> is compiled; its registers come from the table, even when N is
  // smaller than the blocks (the kernel is the same instantiation).
  for (const std::uint64_t seq : {std::uint64_t{4096}, std::uint64_t{40}}) {
    const auto ks = kernel_launches(shape(WorkloadKind::flash2, seq, 128, 64, 64));
    CHECK(launch_named(ks, "flash2_fwd").registers_per_thread ==
          *compiled_registers(90, "flash2_fwd", 128, 64, 64, 2));
  }
  // d = 96 is not compiled: 32 + the O and S accumulators spread over 128 threads.
  const auto est = kernel_launches(shape(WorkloadKind::flash2, 4096, 96, 64, 64));
  CHECK(launch_named(est, "flash2_fwd").registers_per_thread == 32 + (64 * 96 + 64 * 64) / 128);
  // fp32 inputs are not compiled either.
  WorkloadParams f32 = shape(WorkloadKind::flash2, 4096, 128, 64, 64);
  f32.dtype = Dtype::fp32;
  CHECK(launch_named(kernel_launches(f32), "flash2_fwd").registers_per_thread ==
        32 + (64 * 128 + 64 * 64) / 128);
  // block_q and block_kv are not interchangeable: <64, 128, 64> and <64, 64, 128> differ.
  const auto rows_then_keys = [](std::uint32_t bq, std::uint32_t bkv) {
    return launch_named(kernel_launches(shape(WorkloadKind::flash2, 4096, 64, bq, bkv)),
                        "flash2_fwd")
        .registers_per_thread;
  };
  REQUIRE(*compiled_registers(90, "flash2_fwd", 64, 128, 64, 2) !=
          *compiled_registers(90, "flash2_fwd", 64, 64, 128, 2));
  CHECK(rows_then_keys(128, 64) == *compiled_registers(90, "flash2_fwd", 64, 128, 64, 2));
  CHECK(rows_then_keys(64, 128) == *compiled_registers(90, "flash2_fwd", 64, 64, 128, 2));
  // Naive: qk <D, block_q, block_kv> and pv <D, block_q, block_k>.
  const auto naive = kernel_launches(shape(WorkloadKind::naive, 2048, 128, 128, 128));
  const WorkloadParams np = shape(WorkloadKind::naive, 2048, 128, 128, 128);
  CHECK(launch_named(naive, "qk").registers_per_thread ==
        *compiled_registers(90, "qk", 128, 128, 128, 0));
  CHECK(launch_named(naive, "pv").registers_per_thread ==
        *compiled_registers(90, "pv", 128, 128, *np.block_k, 0));
}

}  // namespace memwall
