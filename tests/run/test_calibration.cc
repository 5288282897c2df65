// memwall calibrate: error metrics, the fit on a known answer, and the regression check of the
// calibrated H200 config against the figures recorded when it was fitted.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "models/model_source.h"
#include "sim/core/error.h"
#include "sim/hw/config_loader.h"
#include "sim/run/calibration.h"
#include "sim/run/simulator.h"
#include "support.h"

using namespace memwall;

namespace {

/// The number after "\"KEY\": " inside the object that follows "\"SECTION\": ".
double recorded(const std::string& json, const std::string& section, const std::string& key) {
  const std::size_t s = json.find("\"" + section + "\": {");
  REQUIRE(s != std::string::npos);
  const std::size_t e = json.find('}', s);
  const std::size_t k = json.find("\"" + key + "\": ", s);
  REQUIRE(k < e);
  return std::stod(json.substr(k + key.size() + 4));
}

/// A case "measured" by the simulator itself on `config`: every ncu column from the simulation.
MeasuredCase simulated_case(const HardwareConfig& config, const WorkloadParams& params) {
  MeasuredCase mc;
  mc.params = resolve_workload(params);
  mc.label = case_label(mc.params);
  auto source = make_model_source(mc.params);
  SimOptions options;
  options.flush_l2_between_kernels = true;
  const RunResult run = simulate(config, *source, options);
  for (const KernelResult& k : run.kernels) {
    MeasuredKernel m;
    m.name = k.name;
    m.ncu_time_s = static_cast<double>(k.duration()) * 1e-12;
    m.time_s = *m.ncu_time_s;
    m.dram_read_bytes = static_cast<double>(k.traffic.dram_read_bytes);
    m.dram_write_bytes = static_cast<double>(k.traffic.dram_write_bytes);
    m.l2_read_bytes = static_cast<double>(k.traffic.l2_read_bytes);
    m.l2_write_bytes = static_cast<double>(k.traffic.l2_write_bytes);
    m.xbar_read_bytes = m.l2_read_bytes;
    m.xbar_write_bytes = m.l2_write_bytes;
    mc.kernels.push_back(m);
  }
  return mc;
}

}  // namespace

TEST_CASE("Error metrics are mean and worst |sim/meas - 1| and the correlation of log times") {
  std::vector<KernelComparison> rows(3);
  const double meas[] = {1e-6, 1e-5, 1e-4};
  const double ratio[] = {1.1, 0.8, 1.0};
  for (std::size_t i = 0; i < 3; ++i) {
    rows[i].meas_time_s = meas[i];
    rows[i].sim_time_s = meas[i] * ratio[i];
    rows[i].meas_dram = 100;
    rows[i].sim_dram = 100 * ratio[i];
    rows[i].meas_l2 = 200;
    rows[i].sim_l2 = 200;
  }
  const ErrorMetrics m = error_metrics(rows);
  CHECK(m.rows == 3);
  CHECK(m.time_mape == Approx((0.1 + 0.2 + 0.0) / 3));
  CHECK(m.time_max_error == Approx(0.2));
  CHECK(m.time_worst == 1);
  CHECK(m.dram_mape == Approx((0.1 + 0.2) / 3));
  CHECK(m.l2_mape == 0.0);
  CHECK(m.time_correlation > 0.99);
  for (auto& r : rows) r.sim_time_s = r.meas_time_s * 2;
  CHECK(error_metrics(rows).time_correlation == Approx(1.0));
}

TEST_CASE("Fitting to times the simulator made with a known tensor efficiency finds it again") {
  HardwareConfig truth = test::small_config();
  truth.efficiency.tensor = 0.4;
  std::vector<MeasuredCase> cases;
  for (const std::uint64_t seq : {256u, 512u}) {
    WorkloadParams p;
    p.workload = WorkloadKind::flash2;
    p.heads = 4;
    p.seq = seq;
    p.head_dim = 64;
    p.block_q = 64;
    p.block_kv = 64;
    cases.push_back(simulated_case(truth, p));
  }
  CalibrationOptions options;
  options.params = {FitParam::tensor};
  options.threads = 2;
  const CalibrationResult res = run_calibration(test::small_config(), cases, "simulated", options);
  REQUIRE(res.fitted.size() == 1);
  CHECK(res.fitted[0].initial == 1.0);
  CHECK(res.fitted[0].value == Approx(0.4).epsilon(0.02));
  CHECK(res.final_cost < res.initial_cost);
  CHECK(res.fit.time_mape < 0.01);
  CHECK(res.fit.dram_mape < 1e-9);
}

TEST_CASE("Fit parameters are parsed from a comma list; an unknown or repeated one is an error") {
  CHECK(parse_fit_params("tensor,hbm,launch_overhead") ==
        std::vector<FitParam>{FitParam::tensor, FitParam::hbm, FitParam::launch_overhead});
  CHECK_THROWS_WITH(parse_fit_params("tensor,tensr"), Catch::Contains("tensr"));
  CHECK_THROWS_AS(parse_fit_params("hbm,hbm"), UsageError);
}

TEST_CASE("The calibrated H200 config stays within the recorded held-out errors on the N <= 1024 "
          "held-out cases") {
  std::ifstream in("traces/measured/calibration-h200.json");
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string json = ss.str();
  const HardwareConfig config = load_config("configs/calibrated/h200.yaml");
  const std::vector<MeasuredCase> cases = read_measured_cases("traces/measured/h200-sweep.csv");
  const std::vector<std::size_t> which = small_heldout_cases(cases);
  for (const std::size_t i : which) {
    CHECK(is_held_out(cases[i]));
    CHECK(cases[i].params.seq <= 1024);
  }
  const ErrorMetrics m = error_metrics(compare_cases(config, cases, which, 2));
  CHECK(static_cast<double>(m.rows) == recorded(json, "heldout_small", "rows"));
  constexpr double kMargin = 0.005;  // half a percentage point
  CHECK(m.time_mape <= recorded(json, "heldout_small", "time_mape") + kMargin);
  CHECK(m.time_max_error <= recorded(json, "heldout_small", "time_max_error") + kMargin);
  CHECK(m.dram_mape <= recorded(json, "heldout_small", "dram_mape") + kMargin);
  CHECK(m.l2_mape <= recorded(json, "heldout_small", "l2_mape") + kMargin);
  CHECK(m.time_correlation >= recorded(json, "heldout_small", "time_correlation") - kMargin);
}
