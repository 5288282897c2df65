// memwall calibrate: error metrics, the fit on a known answer, and the regression check of the
// calibrated H200 config against the figures recorded when it was fitted.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/model_source.h"
#include "sim/core/error.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "studies/calibration.h"
#include "studies/calibration_load.h"
#include "tests/support/cli.h"
#include "tests/support/engine.h"

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

using test::slurp;

/// An attention shape on the small test chip: d = 64 and 64-wide blocks.
WorkloadParams small_attention(WorkloadKind kind, std::uint64_t heads, std::uint64_t seq) {
  WorkloadParams p;
  p.workload = kind;
  p.heads = heads;
  p.seq = seq;
  p.head_dim = 64;
  p.block_q = 64;
  p.block_kv = 64;
  if (kind == WorkloadKind::naive) p.block_k = 64;
  return p;
}

/// The small test config with shared-memory traffic on the tensor pipe, as the real presets have
/// it: flash2's time then moves with the tensor efficiency over its whole range (on a pipe of its
/// own, the per-warp shared-memory reads hide the tensor pipe near 1, where the fit starts, and
/// the fit cannot move).
HardwareConfig small_mma_config() {
  HardwareConfig c = test::small_config();
  c.sm.smem_pipe = PipeBooking::kTensor;
  return c;
}

/// Fits `param` alone of `base` (by default the small test chip, efficiencies 1) to `cases`, two
/// cases at a time.

CalibrationResult fit_small_config(FitParam param, const std::vector<MeasuredCase>& cases,
                                   const HardwareConfig& base = test::small_config()) {
  CalibrationOptions options;
  options.params = {param};
  options.threads = 2;
  return run_calibration(base, cases, "simulated", options);
}

/// Runs memwall with `args`; returns the exit code, stdout and stderr into `out`.
int run_memwall(const std::string& args, std::string& out) {
  const test::CliResult r = test::run_memwall(args);
  out = r.out;
  return r.code;
}

}  // namespace

TEST_CASE(
    "memwall calibrate writes a config that extends the base and sets the fitted keys; bad "
    "input exits 2, a load mismatch exits 1") {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("memwall-test-calibrate-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // Two small flash2 cases (N = 256 fitted, N = 1024 held out) whose bytes match the model;
  // `extra_write` bytes more in the held-out case's lts writes.
  auto make_csv = [](std::uint64_t extra_write) {
    std::string csv =
        "workload,batch,heads,seq,head_dim,dtype,block_q,block_kv,block_k,stages,softmax_rows,kernel,time_s,"
        "ncu_time_s,dram_read_bytes,dram_write_bytes,l2_read_bytes,l2_write_bytes,xbar_read_bytes,"
        "xbar_write_bytes\n";
    for (const std::uint64_t seq : {256u, 1024u}) {
      WorkloadParams p;
      p.workload = WorkloadKind::flash2;
      p.heads = 2;
      p.seq = seq;
      p.head_dim = 64;
      p.block_q = 64;
      p.block_kv = 64;
      p.stages = 2;
      const KernelSectorBytes k = count_sector_bytes(resolve_workload(p)).at(0);
      const std::string r = std::to_string(k.read_bytes), w = std::to_string(k.write_bytes);
      const std::string lts_w = std::to_string(k.write_bytes + (seq == 1024 ? extra_write : 0));
      csv += "flash2,1,2," + std::to_string(seq) + ",64,fp16,64,64,,2,,flash2_fwd,2e-5,2e-5," +
             std::to_string(4 * seq * 64 * 2) + ",0," + r + "," + lts_w + "," + r + "," + w + "\n";
    }
    return csv;
  };
  const std::string csv = make_csv(0);
  const std::string measured = (dir / "m.csv").string();
  std::ofstream(measured) << csv;
  const std::string yaml = (dir / "cal.yaml").string();
  const std::string json = (dir / "cal.json").string();
  std::string out;
  REQUIRE(run_memwall("calibrate --config h200 --measured " + measured + " -o " + yaml +
                          " --json " + json +
                          " --params mma_sync,launch_overhead --max-iterations 2",
                      out) == 0);
  CHECK(out.find("0 outside 2.0%") != std::string::npos);
  const std::string text = slurp(yaml);
  CHECK(text.find("extends: h200\n") != std::string::npos);
  CHECK(text.find("# command: memwall calibrate --config h200") != std::string::npos);
  const HardwareConfig base = load_config("h200");
  const HardwareConfig calibrated = load_config(yaml);
  CHECK(calibrated.l2.size == base.l2.size);
  CHECK(calibrated.efficiency.mma_sync == Approx(recorded(slurp(json), "params", "mma_sync")));
  CHECK(calibrated.efficiency.tensor == base.efficiency.tensor);  // flash2 is an mma.sync kernel
  CHECK(calibrated.efficiency.sfu == base.efficiency.sfu);
  CHECK(recorded(slurp(json), "heldout", "rows") == 1);
  CHECK(recorded(slurp(json), "fit", "rows") == 1);
  // The same inputs on two threads give the same JSON, byte for byte.
  const std::string json2 = (dir / "cal2.json").string();
  REQUIRE(run_memwall("calibrate --config h200 --measured " + measured + " -o " +
                          (dir / "cal2.yaml").string() + " --json " + json2 +
                          " --params mma_sync,launch_overhead --max-iterations 2 -j 2",
                      out) == 0);
  CHECK(slurp(json2) == slurp(json));

  CHECK(run_memwall(
            "calibrate --config h200 --measured " + (dir / "none.csv").string() + " -o " + yaml,
            out) == 2);
  CHECK(out.find("none.csv") != std::string::npos);
  CHECK(run_memwall(
            "calibrate --config h200 --measured " + measured + " -o " + yaml + " --params tensr",
            out) == 2);
  CHECK(run_memwall(
            "calibrate --config h200 --measured " + measured + " -o " + yaml + " --hold-out sq=1",
            out) == 2);
  CHECK(out.find("--hold-out: unknown parameter \"sq\"") != std::string::npos);
  CHECK(out.find("Load for load") == std::string::npos);
  // A fit's bad argument or config is reported before the load check runs.
  CHECK(run_memwall("calibrate --config " + (dir / "missing.yaml").string() + " --measured " +
                        measured + " -o " + yaml,
                    out) == 2);
  CHECK(out.find("missing.yaml") != std::string::npos);
  CHECK(out.find("Load for load") == std::string::npos);
  std::ofstream(measured) << make_csv(1
                                      << 20);  // the held-out case writes 1 MiB more than the model
  CHECK(run_memwall("calibrate --measured " + measured + " --load-check", out) == 1);
  CHECK(out.find("FAIL") != std::string::npos);
  CHECK(run_memwall("calibrate --help", out) == 0);
  CHECK(out.find("Examples:") != std::string::npos);
  fs::remove_all(dir);
}

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

TEST_CASE("Fitting to times the simulator made with a known mma.sync efficiency finds it again") {
  HardwareConfig truth = small_mma_config();
  truth.efficiency.mma_sync = 0.4;
  std::vector<MeasuredCase> cases;
  for (const std::uint64_t seq : {256u, 512u}) {
    cases.push_back(simulated_case(truth, small_attention(WorkloadKind::flash2, 4, seq)));
  }
  const CalibrationResult res = fit_small_config(FitParam::mma_sync, cases, small_mma_config());
  REQUIRE(res.fitted.size() == 1);
  CHECK(res.fitted[0].initial == 1.0);
  CHECK(res.fitted[0].value == Approx(0.4).epsilon(0.02));
  CHECK(res.final_cost < res.initial_cost);
  CHECK(res.fit.time_mape < 0.01);
  CHECK(res.fit.dram_mape < 1e-9);
}

TEST_CASE("Fitting to DRAM bytes the simulator made with a known L2 capacity finds it again") {
  // naive writes S (1 to 2 MiB here) through a 1 MiB L2: what is written back during qk depends
  // on how much of the L2 holds lines.
  HardwareConfig truth = test::small_config();
  truth.efficiency.l2_capacity = 0.5;
  std::vector<MeasuredCase> cases;
  for (const std::uint64_t heads : {4u, 8u}) {
    cases.push_back(simulated_case(truth, small_attention(WorkloadKind::naive, heads, 256)));
  }
  const CalibrationResult res = fit_small_config(FitParam::l2_capacity, cases);
  REQUIRE(res.fitted.size() == 1);
  CHECK(res.fitted[0].param == FitParam::l2_capacity);
  CHECK(res.fitted[0].initial == 1.0);
  CHECK(res.fitted[0].value == Approx(0.5));
  CHECK(res.calibrated.efficiency.l2_capacity == Approx(0.5));
  CHECK(res.capacity_evaluations == res.evaluations);
  CHECK(res.capacity_dram_mape < 1e-9);
  CHECK(res.fit.dram_mape < 1e-9);
}

TEST_CASE("Fit parameters are parsed from a comma list; an unknown or repeated one is an error") {
  CHECK(parse_fit_params("tensor,hbm,launch_overhead,l2_capacity") ==
        std::vector<FitParam>{FitParam::tensor, FitParam::hbm, FitParam::launch_overhead,
                              FitParam::l2_capacity});
  CHECK_THROWS_WITH(parse_fit_params("tensor,tensr"), Catch::Contains("tensr"));
  CHECK_THROWS_AS(parse_fit_params("hbm,hbm"), UsageError);
}

TEST_CASE(
    "--hold-out picks the cases by a workload parameter's value; a malformed rule is an error",
    "[hold-out]") {
  const std::vector<MeasuredCase> cases = read_measured_cases("traces/measured/h200-sweep.csv");
  // The default is N in {1024, 8192}.
  const HoldOutRule n_rule;
  CHECK(hold_out_text(n_rule) == "seq in {1024, 8192}");
  CHECK(hold_out_flag(parse_hold_out(hold_out_flag(n_rule))) == "seq=1024,8192");
  const HoldOutRule tiles = parse_hold_out("block_q=64");
  const HoldOutRule stages = parse_hold_out("stages=3");
  const HoldOutRule naive = parse_hold_out("workload=naive");
  std::size_t by_tiles = 0, by_stages = 0, by_naive = 0;
  for (const MeasuredCase& c : cases) {
    INFO(c.label);
    CHECK(is_held_out(c, n_rule) == (c.params.seq == 1024 || c.params.seq == 8192));
    CHECK(is_held_out(c) == is_held_out(c, n_rule));
    const bool flash2 = c.params.workload == WorkloadKind::flash2;
    CHECK(is_held_out(c, tiles) == (flash2 && *c.params.block_q == 64));
    // naive has no stages parameter: never held out by it.
    CHECK(is_held_out(c, stages) == (flash2 && *c.params.stages == 3));
    CHECK(is_held_out(c, naive) == !flash2);
    by_tiles += is_held_out(c, tiles);
    by_stages += is_held_out(c, stages);
    by_naive += is_held_out(c, naive);
  }
  CHECK(by_tiles > 0);
  CHECK(by_stages > 0);
  CHECK(by_naive > 0);
  CHECK_THROWS_WITH(parse_hold_out("seq"), Catch::Contains("expected NAME=V1,V2"));
  CHECK_THROWS_WITH(parse_hold_out("=1024"), Catch::Contains("expected NAME=V1,V2"));
  CHECK_THROWS_WITH(parse_hold_out("sq=1024"), Catch::Contains("unknown parameter \"sq\""));
  CHECK_THROWS_WITH(parse_hold_out("seq=1024,,8192"), Catch::Contains("an empty value"));
  CHECK_THROWS_WITH(parse_hold_out("seq="), Catch::Contains("an empty value"));
}

TEST_CASE(
    "The calibrated H200 config stays within the recorded held-out errors on the N <= 1024 "
    "held-out cases") {
  REQUIRE(std::ifstream("traces/measured/calibration-h200.json").good());
  const std::string json = slurp("traces/measured/calibration-h200.json");
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

TEST_CASE(
    "Finding 21: evaluate_config scores a config as it is, split as the fit splits, and fits "
    "nothing",
    "[first-hour]") {
  const HardwareConfig chip = test::small_config();
  // Cases "measured" on a chip whose mma.sync rate is lower than the one evaluated.
  HardwareConfig slower = small_mma_config();
  slower.efficiency.mma_sync = 0.5;
  std::vector<MeasuredCase> cases;
  for (const std::uint64_t seq : {256u, 512u, 1024u}) {
    cases.push_back(simulated_case(slower, small_attention(WorkloadKind::flash2, 2, seq)));
  }
  CalibrationOptions options;
  options.threads = 2;
  const CalibrationResult r = evaluate_config(chip, cases, "simulated", options);
  CHECK(r.evaluated_only);
  CHECK(r.fitted.empty());
  CHECK(r.iterations == 0);
  CHECK(r.calibrated.efficiency.mma_sync == chip.efficiency.mma_sync);
  // N = 1024 is held out, the others fitted: the rows are compare_cases' on each set.
  REQUIRE(r.heldout_cases == std::vector<std::size_t>{2});
  REQUIRE(r.fit_cases == std::vector<std::size_t>{0, 1});
  const std::vector<KernelComparison> fit_rows = compare_cases(chip, cases, r.fit_cases, 1);
  REQUIRE(r.fit_rows.size() == fit_rows.size());
  for (std::size_t i = 0; i < fit_rows.size(); ++i)
    CHECK(r.fit_rows[i].sim_time_s == fit_rows[i].sim_time_s);
  CHECK(r.fit.time_mape == error_metrics(fit_rows).time_mape);
  CHECK(r.heldout.time_mape ==
        error_metrics(compare_cases(chip, cases, r.heldout_cases, 1)).time_mape);
  const std::string text = calibration_to_text(r, cases);
  CHECK(text.rfind("Evaluated " + chip.name + " as it is (no fit)", 0) == 0);
  CHECK(text.find("Fitted") == std::string::npos);
  CHECK(text.find("base config (fit set)") == std::string::npos);
}
