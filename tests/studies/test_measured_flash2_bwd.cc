// The flash2-bwd CUDA twin measured on the H200 (traces/measured/h200-flash2-bwd.csv: 24 cases,
// B = 1, H = 16, N 512 … 16384, d 64 and 128, causal or not; Nsight Compute per kernel) against
// the model: SM->L2 bytes kernel by kernel exactly, from the op stream for every case and as
// simulated for the cases up to N = 4096; and the calibrated H200's time errors, bounded by head
// dimension as recorded. docs/validation.md, "The backward pass", has the table.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "models/model_source.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "studies/sweep_csv.h"
#include "tests/studies/measured_rows.h"
#include "traces/traffic_counter.h"

using namespace memwall;
using test::measured_cell;

namespace {

const char* kBwd = "traces/measured/h200-flash2-bwd.csv";

struct BwdCase {
  WorkloadParams params;
  int line = 0;
  /// The three launches' rows: name, xbar read / write bytes, ncu time.
  struct Kernel {
    std::string name;
    double read = 0, write = 0, time = 0;
  };
  std::vector<Kernel> kernels;
};

std::vector<BwdCase> bwd_cases() {
  const CsvTable csv = read_csv(kBwd);
  std::vector<BwdCase> out;
  for (std::size_t i = 0; i < csv.rows.size(); ++i) {
    const auto& row = csv.rows[i];
    const std::string& kernel = measured_cell(csv, row, "kernel");
    if (kernel == "total") continue;
    if (kernel == "flash2_bwd_dot_do_o") {
      BwdCase c;
      c.line = csv.row_lines[i];
      c.params.workload = WorkloadKind::flash2_bwd;
      c.params.batch = std::stoull(measured_cell(csv, row, "batch"));
      c.params.heads = std::stoull(measured_cell(csv, row, "heads"));
      c.params.seq = std::stoull(measured_cell(csv, row, "seq"));
      c.params.head_dim = std::stoull(measured_cell(csv, row, "head_dim"));
      c.params.causal = measured_cell(csv, row, "causal") == "1";
      c.params.block_q = static_cast<std::uint32_t>(std::stoul(measured_cell(csv, row, "block_q")));
      c.params.block_kv =
          static_cast<std::uint32_t>(std::stoul(measured_cell(csv, row, "block_kv")));
      c.params = resolve_workload(c.params);
      out.push_back(c);
    }
    REQUIRE_FALSE(out.empty());
    out.back().kernels.push_back({kernel, std::stod(measured_cell(csv, row, "xbar_read_bytes")),
                                  std::stod(measured_cell(csv, row, "xbar_write_bytes")),
                                  std::stod(measured_cell(csv, row, "ncu_time_s"))});
  }
  return out;
}

}  // namespace

TEST_CASE(
    "flash2-bwd on the H200: the model's SM->L2 bytes equal the SM-side counters in all "
    "72 kernels",
    "[measured][flash2-bwd]") {
  const std::vector<BwdCase> cases = bwd_cases();
  REQUIRE(cases.size() == 24);
  for (const BwdCase& c : cases) {
    const auto source = make_model_source(c.params);
    const TraceCounts counts = count_traffic(*source);
    REQUIRE(counts.kernels.size() == c.kernels.size());
    for (std::size_t k = 0; k < c.kernels.size(); ++k) {
      INFO(kBwd << ":" << c.line << " " << c.kernels[k].name);
      CHECK(counts.kernels[k].name == c.kernels[k].name);
      CHECK(static_cast<double>(counts.kernels[k].read_bytes) == c.kernels[k].read);
      CHECK(static_cast<double>(counts.kernels[k].write_bytes) == c.kernels[k].write);
    }
  }
}

TEST_CASE(
    "flash2-bwd on the H200 up to N = 4096: simulated SM->L2 bytes exact, time errors as "
    "recorded",
    "[measured][flash2-bwd]") {
  const HardwareConfig config = load_config("configs/calibrated/h200.yaml");
  struct Family {
    std::uint64_t head_dim;
    const char* kernel;
    double mape, worst;  // of 2026-12-02, rounded up, plus half a point: a better model passes
  };
  // The main kernel at d = 64 is 23-28% fast: its P/dS element work (mask, exponentials, dS) in
  // issue slots, twice as many elements per block pair as at d = 128, is not in the model
  // (models/flash2_bwd.cc books it as fp32/sfu throughput; the measured instruction counts are
  // in traces/measured/h200-flash2-bwd/README.md). The two small launches (3-17 us) miss by
  // up to 42% both ways.
  const Family families[] = {{64, "flash2_bwd", 0.266, 0.280},
                             {128, "flash2_bwd", 0.070, 0.084},
                             {64, "flash2_bwd_dot_do_o", 0.183, 0.224},
                             {128, "flash2_bwd_dot_do_o", 0.177, 0.220},
                             {64, "flash2_bwd_convert_dq", 0.214, 0.425},
                             {128, "flash2_bwd_convert_dq", 0.144, 0.272}};
  std::vector<std::vector<double>> errors(std::size(families));
  for (const BwdCase& c : bwd_cases()) {
    if (c.params.seq > 4096) continue;
    const auto source = make_model_source(c.params);
    SimOptions options;
    options.flush_l2_between_kernels = true;  // as ncu ran each kernel
    const RunResult run = simulate(config, *source, options);
    REQUIRE(run.kernels.size() == c.kernels.size());
    for (std::size_t k = 0; k < c.kernels.size(); ++k) {
      const KernelResult& sim = run.kernels[k];
      INFO(kBwd << ":" << c.line << " " << c.kernels[k].name);
      CHECK(static_cast<double>(sim.traffic.l2_read_bytes) == c.kernels[k].read);
      CHECK(static_cast<double>(sim.traffic.l2_write_bytes) == c.kernels[k].write);
      for (std::size_t f = 0; f < std::size(families); ++f) {
        if (families[f].head_dim == c.params.head_dim && sim.name == families[f].kernel) {
          errors[f].push_back(std::abs(seconds(sim.duration()) / c.kernels[k].time - 1));
        }
      }
    }
  }
  for (std::size_t f = 0; f < std::size(families); ++f) {
    REQUIRE(errors[f].size() == 8);
    double sum = 0, worst = 0;
    for (const double e : errors[f]) {
      sum += e;
      worst = std::max(worst, e);
    }
    std::printf("flash2-bwd d=%-3llu %-22s 8 kernels: time MAPE %5.1f%% (worst %5.1f%%)\n",
                static_cast<unsigned long long>(families[f].head_dim), families[f].kernel,
                sum / 8 * 100, worst * 100);
    CHECK(sum / 8 <= families[f].mape + 0.005);
    CHECK(worst <= families[f].worst + 0.005);
  }
}
