// The read:write mix stream of models/cuda/ubench/hbm_mix.cu, simulated on the H200 and H100
// presets and compared with what each chip measured (traces/measured/h200-hbm-mix/extremes,
// traces/measured/h100-ubench/hbm-mix): the test of the HBM model's read rate (efficiency.hbm),
// write rates (hbm.write_rate, hbm.mixed_write_rate) and mix window, on a kernel whose only
// bottleneck is the HBM.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "tests/support/csv_rows.h"
#include "tests/support/engine.h"

using namespace memwall;

namespace {

constexpr std::uint64_t kVector = 16;  // bytes per thread per access (uint4)
constexpr std::uint32_t kThreads = 1024;
constexpr std::uint64_t kOpBytes = kVector * kThreads;  // one warp-wide access of the whole CTA
constexpr std::uint64_t kLaunchBytes = std::uint64_t{1} << 30;
constexpr std::uint64_t kWriteBase = std::uint64_t{2} << 30;  // writes in the second half

/// hbm_mix.cu's kernel for the mix reads:writes on `ctas` SMs, as memwall ops: per CTA and step,
/// `reads` loads and `writes` stores of 16 KiB (the CTA's 1024 threads × 16 B), then a wait for
/// the loads (the kernel sums the loaded words before its next step). The same bytes per launch.
test::TestKernel mix_kernel(std::uint32_t reads, std::uint32_t writes, std::uint32_t ctas) {
  const std::uint64_t steps = kLaunchBytes / ((reads + writes) * kOpBytes * ctas);
  test::TestKernel k;
  k.info.name = "mix_stream";
  k.info.threads_per_cta = kThreads;
  k.info.registers_per_thread = 64;
  k.ctas.resize(ctas);
  for (std::uint32_t b = 0; b < ctas; ++b) {
    std::vector<Op>& ops = k.ctas[b];
    std::uint64_t r = b * steps * reads * kOpBytes;
    std::uint64_t w = kWriteBase + b * steps * writes * kOpBytes;
    for (std::uint64_t s = 0; s < steps; ++s) {
      for (std::uint32_t a = 0; a < reads; ++a, r += kOpBytes) {
        Op load;
        load.kind = OpKind::load;
        load.tag = 1;
        load.box = Box{r, 1, static_cast<std::uint32_t>(kOpBytes), kOpBytes};
        ops.push_back(load);
      }
      for (std::uint32_t a = 0; a < writes; ++a, w += kOpBytes) {
        Op store;
        store.kind = OpKind::store;
        store.box = Box{w, 1, static_cast<std::uint32_t>(kOpBytes), kOpBytes};
        ops.push_back(store);
      }
      if (reads > 0) {
        Op wait;
        wait.kind = OpKind::wait;
        wait.tag = 1;
        ops.push_back(wait);
      }
    }
  }
  return k;
}

/// Simulated bytes per second of the mix on `config`'s first `ctas` SMs.
double simulated_rate(const HardwareConfig& config, std::uint32_t reads, std::uint32_t writes,
                      std::uint32_t ctas) {
  WorkloadInfo w;
  w.name = "hbm_mix";
  w.tensors = {{"src", 0, kLaunchBytes}, {"dst", kWriteBase, kLaunchBytes}};
  test::VectorTraceSource source(w, {mix_kernel(reads, writes, ctas)});
  const RunResult r = simulate(config, source);
  const KernelResult& k = r.kernels.at(0);
  const std::uint64_t bytes = k.traffic.l2_read_bytes + k.traffic.l2_write_bytes;
  return static_cast<double>(bytes) * 1e12 / static_cast<double>(k.duration());
}

constexpr const char* kH200Mixes = "traces/measured/h200-hbm-mix/extremes";
constexpr const char* kH100Mixes = "traces/measured/h100-ubench/hbm-mix";

/// Measured GB/s per mix in `dir` (hbm_mix.sh's output): the mean of the three passes on every SM.
std::map<std::pair<int, int>, double> measured_rates(const std::string& dir) {
  std::map<std::pair<int, int>, double> sum;
  for (const char* pass : {"1", "2", "3"}) {
    const std::string path = dir + "/hbm_mix-all-" + pass + ".csv";
    for (const auto& c : test::csv_rows(path, 11)) {
      sum[{std::stoi(c[0]), std::stoi(c[1])}] += std::stod(c[7]) / 3;
    }
  }
  return sum;
}

}  // namespace

/// log(simulated / measured rate) per mix, in `mixes` order.
std::vector<double> log_errors(const HardwareConfig& c,
                               const std::vector<std::pair<std::pair<int, int>, double>>& mixes) {
  std::vector<double> e;
  for (const auto& [mix, gbps] : mixes) {
    e.push_back(std::log(simulated_rate(c, mix.first, mix.second, 132) / 1e9 / gbps));
  }
  return e;
}

/// The four HBM fractions of `c` the fit moves: efficiency.hbm (the read rate), hbm.write_rate,
/// hbm.mixed_read_rate, hbm.mixed_write_rate.
double* fraction(HardwareConfig& c, int i) {
  double* f[] = {&c.efficiency.hbm, &c.hbm.write_rate, &c.hbm.mixed_read_rate,
                 &c.hbm.mixed_write_rate};
  return f[i];
}

/// The fit behind a preset's HBM fractions: Gauss-Newton on log(simulated / measured) over the
/// 14 mixes measured in `dir`, parameters the logs of the four fractions, on the calibrated
/// `config` (its usable L2, fitted to DRAM bytes alone, sets how much of a write stream stays
/// dirty in the L2, and its launch overhead is part of a timed kernel). Prints every step, the
/// best fractions and each mix's error.
void fit_fractions(const std::string& config, const std::string& dir) {
  HardwareConfig c = load_config(config);
  const auto measured = measured_rates(dir);
  const std::vector<std::pair<std::pair<int, int>, double>> mixes(measured.begin(), measured.end());
  for (int i = 0; i < 4; ++i) *fraction(c, i) = 0.9;
  HardwareConfig best = c;
  double best_cost = INFINITY;
  for (int iteration = 0; iteration < 6; ++iteration) {
    const std::vector<double> e = log_errors(c, mixes);
    double cost = 0;
    for (const double x : e) cost += x * x;
    if (cost < best_cost) {
      best_cost = cost;
      best = c;
    }
    std::printf("iteration %d: cost %.6f  read %.4f write %.4f mixed_read %.4f mixed_write %.4f\n",
                iteration, cost, c.efficiency.hbm, c.hbm.write_rate, c.hbm.mixed_read_rate,
                c.hbm.mixed_write_rate);
    // Jacobian by forward differences of 1% in each fraction.
    std::vector<std::vector<double>> jac(4);
    for (int p = 0; p < 4; ++p) {
      HardwareConfig d = c;
      *fraction(d, p) *= 0.99;
      const std::vector<double> ed = log_errors(d, mixes);
      for (std::size_t k = 0; k < e.size(); ++k) jac[p].push_back((ed[k] - e[k]) / std::log(0.99));
    }
    // Normal equations (4 x 4), solved by Gaussian elimination.
    double a[4][5] = {};
    for (int p = 0; p < 4; ++p) {
      for (int q = 0; q < 4; ++q) {
        for (std::size_t k = 0; k < e.size(); ++k) a[p][q] += jac[p][k] * jac[q][k];
      }
      for (std::size_t k = 0; k < e.size(); ++k) a[p][4] -= jac[p][k] * e[k];
    }
    for (int p = 0; p < 4; ++p) {
      for (int q = p + 1; q < 4; ++q) {
        const double m = a[q][p] / a[p][p];
        for (int r = p; r < 5; ++r) a[q][r] -= m * a[p][r];
      }
    }
    double step[4];
    for (int p = 3; p >= 0; --p) {
      double v = a[p][4];
      for (int q = p + 1; q < 4; ++q) v -= a[p][q] * step[q];
      step[p] = v / a[p][p];
    }
    for (int p = 0; p < 4; ++p)
      *fraction(c, p) = std::min(1.0, *fraction(c, p) * std::exp(step[p]));
  }
  c = best;
  std::printf(
      "least cost %.6f: efficiency.hbm %.4f hbm.write_rate %.4f hbm.mixed_read_rate %.4f "
      "hbm.mixed_write_rate %.4f\n",
      best_cost, c.efficiency.hbm, c.hbm.write_rate, c.hbm.mixed_read_rate, c.hbm.mixed_write_rate);
  for (const auto& [mix, gbps] : mixes) {
    const double sim = simulated_rate(c, mix.first, mix.second, 132) / 1e9;
    std::printf("%2d:%-2d measured %7.1f simulated %7.1f  %+.1f%%\n", mix.first, mix.second, gbps,
                sim, (sim / gbps - 1) * 100);
  }
}

// Hidden (run on demand): the fits behind configs/h200.yaml's and configs/h100-sxm.yaml's HBM
// fractions.
TEST_CASE("Fit: the H200 preset's HBM fractions to hbm_mix's measured mixes", "[.][hbm-fit]") {
  fit_fractions("h200-calibrated", kH200Mixes);
}

TEST_CASE("Fit: the H100 preset's HBM fractions to hbm_mix's measured mixes", "[.][hbm-fit-h100]") {
  fit_fractions("h100-sxm-calibrated", kH100Mixes);
}

TEST_CASE("hbm_mix's stream on the calibrated H200 and H100 runs every measured mix as fitted",
          "[run][hbm][measured]") {
  // The presets' HBM fractions and read rates were fitted to these mixes (the hidden tests
  // above: the H200's every mix within 3.0%, the H100's within 2.0%); here they are whatever the
  // configs say, and the stream must still match each chip, with half a point to spare.
  for (const auto& [config, dir, tolerance] :
       {std::tuple{"h200-calibrated", kH200Mixes, 0.035},
        std::tuple{"h100-sxm-calibrated", kH100Mixes, 0.025}}) {
    INFO(config);
    const HardwareConfig c = load_config(config);
    for (const auto& [mix, gbps] : measured_rates(dir)) {
      INFO(mix.first << ":" << mix.second << " measured " << gbps << " GB/s");
      const double sim = simulated_rate(c, mix.first, mix.second, 132) / 1e9;
      CHECK(std::abs(sim / gbps - 1) <= tolerance);
    }
  }
}
