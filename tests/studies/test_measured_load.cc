// Load for load: the model's SM->L2 bytes against the bytes Nsight Compute counted on the real
// kernels (traces/measured/h200-sweep.csv), and the reading of the measured CSV.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "studies/calibration_load.h"
#include "studies/calibration_measured.h"
#include "studies/io_traffic.h"
#include "studies/sweep_csv.h"
#include "tests/studies/measured_rows.h"

using namespace memwall;

namespace {

const char* kSweep = "traces/measured/h200-sweep.csv";

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/memwall-test-" + name;
  std::ofstream(path) << text;
  return path;
}

const char* kHeader =
    "workload,batch,heads,seq,head_dim,dtype,block_q,block_kv,block_k,stages,softmax_rows,kernel,"
    "time_s,ncu_time_s,dram_read_bytes,dram_write_bytes,l2_read_bytes,l2_write_bytes,xbar_read_bytes,"
    "xbar_write_bytes\n";

/// The committed sweep and its load check, computed once for the tests below.
struct SweepCheck {
  std::vector<MeasuredCase> cases = read_measured_cases(kSweep);
  LoadCheck check = run_load_check(cases, 0.02, 2);
};
const SweepCheck& sweep_check() {
  static const SweepCheck s;
  return s;
}

}  // namespace

TEST_CASE(
    "Every profiled kernel of the H200 sweep moves the model's SM->L2 bytes: reads as the "
    "SM-side xbar bytes, writes as the lts write sectors, within 2%") {
  const std::vector<MeasuredCase>& cases = sweep_check().cases;
  const LoadCheck& check = sweep_check().check;
  REQUIRE(check.rows.size() >= 100);
  for (const LoadCheckRow& r : check.rows) {
    INFO(cases[r.case_index].label << " " << r.kernel << " (" << kSweep << ":" << r.line << ")");
    CHECK(std::abs(r.read_error) <= 0.02);
    CHECK(std::abs(r.write_error) <= 0.02);
  }
  CHECK(check.failures() == 0);
}

TEST_CASE(
    "The lts read sectors never exceed the model's reads, and softmax (no box read twice) "
    "reaches the L2 slices whole") {
  const LoadCheck& check = sweep_check().check;
  REQUIRE_FALSE(check.summary.empty());
  for (const CoalescingSummary& g : check.summary) {
    INFO(g.workload << " " << g.kernel);
    CHECK(g.max_ratio <= 1.0 + 1e-9);
    if (g.kernel == "softmax") CHECK(g.min_ratio == Approx(1.0));
  }
}

TEST_CASE("The model's sector bytes equal the closed form when every row is sector aligned") {
  for (const char* workload : {"naive", "flash2"}) {
    WorkloadParams p;
    p.workload = parse_workload_kind(workload);
    p.batch = 1;
    p.heads = 2;
    p.seq = 512;
    p.head_dim = 64;
    const IoBytes closed = closed_form_bytes(p);
    std::uint64_t read = 0, write = 0;
    for (const KernelSectorBytes& k : count_sector_bytes(resolve_workload(p))) {
      read += k.read_bytes;
      write += k.write_bytes;
    }
    INFO(workload);
    CHECK(read == closed.read);
    CHECK(write == closed.write);
  }
}

TEST_CASE("Measured rows are grouped into cases by their parameters, the total rows dropped") {
  const std::string path = write_temp(
      "measured-ok.csv", std::string(kHeader) +
                             "naive,1,2,256,64,fp16,128,128,64,,4,qk,1e-6,1e-6,1,0,1,1,1,1\n"
                             "naive,1,2,256,64,fp16,128,128,64,,4,softmax,1e-6,,,,,,,\n"
                             "naive,1,2,256,64,fp16,128,128,64,,4,total,2e-6,,,,,,,\n"
                             "flash2,1,2,256,64,fp16,64,64,,2,,flash2_fwd,1e-6,1e-6,1,0,1,1,1,1\n");
  const std::vector<MeasuredCase> cases = read_measured_cases(path);
  REQUIRE(cases.size() == 2);
  CHECK(cases[0].kernels.size() == 2);
  CHECK(cases[0].kernels[0].profiled());
  CHECK_FALSE(cases[0].kernels[1].profiled());
  CHECK_FALSE(cases[0].profiled());
  CHECK(cases[1].profiled());
  CHECK(cases[1].params.block_q.value() == 64);
  CHECK(cases[0].kernels[1].line == 3);
}

TEST_CASE("A malformed measured CSV is one error naming the file, the line and the column") {
  const std::string bad_number = write_temp(
      "measured-bad.csv",
      std::string(kHeader) + "flash2,1,2,256,64,fp16,64,64,,2,,flash2_fwd,1e-6,fast,1,0,1,1,1,1\n");
  CHECK_THROWS_WITH(read_measured_cases(bad_number),
                    Catch::Contains(bad_number + ":2") && Catch::Contains("ncu_time_s"));
  const std::string missing = write_temp("measured-missing.csv", "workload,batch\nflash2,1\n");
  CHECK_THROWS_AS(read_measured_cases(missing), UsageError);
  const std::string bad_param = write_temp(
      "measured-param.csv",
      std::string(kHeader) + "flash2,1,2,0,64,fp16,64,64,,2,,flash2_fwd,1e-6,1e-6,1,0,1,1,1,1\n");
  CHECK_THROWS_WITH(read_measured_cases(bad_param), Catch::Contains(bad_param + ":2"));
}

TEST_CASE(
    "Repeated launches of one kernel on the H200: the SM-side reads are the model's on "
    "every launch, while the lts read sectors move between launches") {
  // traces/measured/h200-lts-repeat.csv: five launches of each of nine (case, kernel) pairs,
  // profiled one by one (models/cuda/lts_repeat.sh). The lts read counter follows the L2
  // request coalescer, whose merging depends on how the CTAs happen to line up; the SM-side
  // counter does not.
  const CsvTable csv = read_csv("traces/measured/h200-lts-repeat.csv");
  const auto cell = [&](const std::vector<std::string>& row, const char* name) {
    return test::measured_cell(csv, row, name);
  };
  // The model's read bytes per (case, kernel), counted once per case.
  std::map<std::string, std::vector<KernelSectorBytes>> model_by_case;
  std::map<std::string, std::vector<double>> lts_by_kernel;
  for (const std::vector<std::string>& row : csv.rows) {
    const WorkloadParams params = test::measured_params(csv, row);
    std::string case_key;
    for (const auto& [name, value] : params.named()) case_key += name + "=" + value + ",";
    auto [it, fresh] = model_by_case.try_emplace(case_key);
    if (fresh) it->second = count_sector_bytes(params);
    const std::string kernel = cell(row, "kernel");
    std::uint64_t model_read = 0;
    for (const KernelSectorBytes& k : it->second) {
      if (k.name == kernel) model_read = k.read_bytes;
    }
    INFO(csv_line(row));
    CHECK(model_read == std::stoull(cell(row, "xbar_read_bytes")));
    const double lts = std::stod(cell(row, "l2_read_bytes"));
    CHECK(lts <= static_cast<double>(model_read));
    lts_by_kernel[case_key + " " + kernel].push_back(lts);
  }
  REQUIRE(lts_by_kernel.size() == 9);
  // No single figure is within 2% of every launch of a kernel whose highest lts count exceeds
  // its lowest by more than 1.02 / 0.98; the committed launches have such kernels.
  int beyond_two_percent = 0;
  for (const auto& [key, values] : lts_by_kernel) {
    INFO(key);
    CHECK(values.size() == 5);
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    if (*hi / *lo > 1.02 / 0.98) ++beyond_two_percent;
  }
  CHECK(beyond_two_percent >= 1);
}

TEST_CASE(
    "The variant columns of a measured CSV: missing or at their defaults they read as before, "
    "else they are the case's parameters") {
  const std::string row = "flash2,1,2,256,64,fp16,64,64,,2,,flash2_fwd,1e-6,1e-6,1,0,1,1,1,1";
  const std::string plain = write_temp("measured-plain.csv", std::string(kHeader) + row + "\n");
  const std::string header = std::string(kHeader).insert(std::string(kHeader).size() - 1,
                                                         ",kv_heads,seq_kv,causal,splits");
  const std::string defaults =
      write_temp("measured-defaults.csv", header + row + ",2,256,0,1\n" + row + ",1,,,\n" + row +
                                              ",,,1,\n" + row + ",,512,,4\n");
  const std::vector<MeasuredCase> before = read_measured_cases(plain);
  const std::vector<MeasuredCase> cases = read_measured_cases(defaults);
  REQUIRE(before.size() == 1);
  REQUIRE(cases.size() == 4);
  CHECK(cases[0].label == before[0].label);
  CHECK(cases[0].params.named() == before[0].params.named());
  CHECK(cases[1].label == "flash2 B=1 H=2 N=256 d=64 Hkv=1 Br=64 Bc=64 st=2");
  CHECK(cases[2].label == "flash2 B=1 H=2 N=256 d=64 causal Br=64 Bc=64 st=2");
  CHECK(cases[3].label == "flash2 B=1 H=2 N=256 d=64 Nkv=512 Br=64 Bc=64 st=2 S=4");
  CHECK(*cases[3].params.splits == 4);

  // Only the shape columns are required of the parameters: workload, dtype and the tiling left
  // out are their defaults (flash2, fp16).
  const std::string shape_only = write_temp(
      "measured-shape.csv",
      "batch,heads,seq,head_dim,block_q,block_kv,stages,kernel,time_s,ncu_time_s,"
      "dram_read_bytes,dram_write_bytes,l2_read_bytes,l2_write_bytes,"
      "xbar_read_bytes,xbar_write_bytes\n1,2,256,64,64,64,2,flash2_fwd,1e-6,1e-6,1,0,1,1,1,1\n");
  REQUIRE(read_measured_cases(shape_only).size() == 1);
  CHECK(read_measured_cases(shape_only)[0].label == before[0].label);

  for (const auto& [cells, column] :
       {std::pair{"x,,,", "kv_heads"}, std::pair{",08a,,", "seq_kv"}, std::pair{",,,0", "splits"},
        std::pair{",,,auto", "splits"}}) {
    const std::string path =
        write_temp("measured-variant-bad.csv", header + row + "," + cells + "\n");
    INFO(cells);
    CHECK_THROWS_WITH(
        read_measured_cases(path),
        Catch::Contains(path + ":2: column " + column + ": expected a positive whole number"));
  }
  const std::string bad_causal = write_temp("measured-causal.csv", header + row + ",,,2,\n");
  CHECK_THROWS_WITH(read_measured_cases(bad_causal),
                    Catch::Contains(bad_causal + ":2: column causal: expected 0 or 1, got \"2\""));
}
