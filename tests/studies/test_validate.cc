// Validation against changes of the chip (studies/validate): the reading of a measurement file,
// the override of each setting, the slowdowns and errors against simulations run here directly,
// the summary's arithmetic, and the CSV table read back.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <cmath>
#include <fstream>
#include <string>

#include "models/workload_params.h"
#include "sim/core/error.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "studies/validate.h"
#include "studies/workload_config.h"

using namespace memwall;

namespace {

const char* kTeaching = "configs/hypothetical/teaching-gpu.yaml";

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/memwall-test-validate-" + std::to_string(::getpid()) + "-" + name;
  std::ofstream(path) << text;
  return path;
}

const char* kParams =
    "workload,batch,heads,seq,head_dim,dtype,block_q,block_kv,block_k,stages,softmax_rows,";
/// naive at N = 256, d = 32 on the teaching GPU: three kernels and a total.
const char* kNaive = "naive,1,1,256,32,fp16,128,128,64,,4,";

/// A green-context file: the case without one (the reference) and in a context of 2 SMs.
std::string sm_file() {
  std::string t = std::string(kParams) + "kernel,time_s,sms_requested,sms\n";
  const char* kernels[] = {"qk", "softmax", "pv", "total"};
  const double full[] = {4e-6, 3e-6, 5e-6, 12e-6};
  for (int k = 0; k < 4; ++k)
    t += std::string(kNaive) + kernels[k] + "," + std::to_string(full[k]) + ",,4\n";
  for (int k = 0; k < 4; ++k)
    t += std::string(kNaive) + kernels[k] + "," + std::to_string(2 * full[k]) + ",2,2\n";
  return t;
}

double seconds_of(Tick t) { return static_cast<double>(t) / static_cast<double>(kTicksPerSecond); }

/// The case of kNaive, as the file's columns give it.
WorkloadParams naive_params() {
  return params_from_named({{"workload", "naive"},
                            {"seq", "256"},
                            {"head_dim", "32"},
                            {"block_q", "128"},
                            {"block_kv", "128"},
                            {"block_k", "64"},
                            {"softmax_rows", "4"}});
}

}  // namespace

TEST_CASE("validate simulates each green context at sm.count of the SMs it held", "[validate]") {
  ValidateOptions o;
  o.config = kTeaching;
  const ValidationTable t =
      run_validation(ChipChange::kSmCount, write_temp("sm.csv", sm_file()), o);
  REQUIRE(t.settings.size() == 2);
  CHECK(t.settings[0].label == "none");
  CHECK(t.settings[0].reference);
  CHECK(t.settings[0].override_text == "sm.count=4");
  CHECK(t.settings[1].label == "green 2");
  CHECK(t.settings[1].override_text == "sm.count=2");
  CHECK(t.cases == 1);
  CHECK(t.simulations == 2);
  REQUIRE(t.rows.size() == 8);  // total, qk, softmax, pv at each of two settings

  const RunResult full = simulate_workload(load_config(kTeaching), naive_params());
  const RunResult half = simulate_workload(load_config(kTeaching, {"sm.count=2"}), naive_params());
  const ValidationRow& total_full = t.rows[0];
  const ValidationRow& total_half = t.rows[1];
  CHECK(total_full.kernel == "total");
  CHECK(total_full.family == "naive");
  CHECK(total_full.sim_time_s == Approx(seconds_of(full.time)).epsilon(1e-12));
  CHECK(total_half.sim_time_s == Approx(seconds_of(half.time)).epsilon(1e-12));
  CHECK(total_half.meas_time_s == Approx(24e-6));
  CHECK(total_half.meas_slowdown == Approx(2.0));
  CHECK(total_half.sim_slowdown == Approx(seconds_of(half.time) / seconds_of(full.time)));
  CHECK(total_half.slowdown_error() == Approx(total_half.sim_slowdown / 2.0 - 1));
  const ValidationRow& qk_half = t.rows[3];
  CHECK(qk_half.family == "naive qk");
  CHECK(qk_half.setting == "green 2");
  CHECK(qk_half.sim_time_s == Approx(seconds_of(half.kernels[0].duration())).epsilon(1e-12));
  CHECK(qk_half.time_error() == Approx(qk_half.sim_time_s / 8e-6 - 1));
  CHECK(qk_half.line == 6);
  CHECK_FALSE(qk_half.sim_dram_bytes.has_value());  // the file measured no DRAM bytes
}

TEST_CASE(
    "validate takes a carve-out out of the config's l2.size and compares DRAM bytes with a flushed run",
    "[validate]") {
  const HardwareConfig hw = load_config(kTeaching);
  const std::uint64_t granted = hw.l2.size.count / 4;
  std::string csv = std::string(kParams) +
                    "kernel,time_s,reserve,granted_bytes,dram_read_bytes,dram_write_bytes\n";
  for (const char* reserve : {"none", "25%"}) {
    const std::string g = std::string(reserve) == "none" ? "" : std::to_string(granted);
    csv += std::string(kNaive) + "qk,4e-6," + reserve + "," + g + ",1000,2000\n";
    csv += std::string(kNaive) + "softmax,3e-6," + reserve + "," + g + ",1000,1000\n";
    csv += std::string(kNaive) + "pv,5e-6," + reserve + "," + g + ",3000,0\n";
  }
  ValidateOptions o;
  o.config = kTeaching;
  const ValidationTable t = run_validation(ChipChange::kL2Size, write_temp("l2.csv", csv), o);
  REQUIRE(t.settings.size() == 2);
  CHECK(t.settings[1].label == "reserve 25%");
  CHECK(t.settings[1].override_text ==
        "l2.size=" + std::to_string(hw.l2.size.count - granted) + "B");
  CHECK(t.simulations == 4);  // each setting run as timed and with the L2 flushed between kernels

  SimOptions flushed;
  flushed.flush_l2_between_kernels = true;
  const RunResult less = simulate_workload(load_config(kTeaching, {t.settings[1].override_text}),
                                           naive_params(), flushed);
  std::uint64_t dram = 0;
  for (const KernelResult& k : less.kernels)
    dram += k.traffic.dram_read_bytes + k.traffic.dram_write_bytes;
  const ValidationRow& total = t.rows[1];
  CHECK(total.kernel == "total");
  CHECK(total.setting == "reserve 25%");
  REQUIRE(total.meas_dram_bytes.has_value());
  CHECK(*total.meas_dram_bytes == Approx(8000));  // no total row: the kernels' sum
  CHECK(total.meas_time_s == Approx(12e-6));
  CHECK(*total.sim_dram_bytes == Approx(static_cast<double>(dram)));
  CHECK(*total.meas_dram_growth == Approx(1.0));
}

TEST_CASE("The summary is the mean |error| and the geometric mean of the slowdowns", "[validate]") {
  std::vector<ValidationRow> rows(4);
  const char* cases[] = {"a", "b"};
  for (int i = 0; i < 4; ++i) {
    rows[i].case_label = cases[i % 2];
    rows[i].family = "flash2";
    rows[i].kernel = "total";
    rows[i].setting = i < 2 ? "none" : "green 66";
    rows[i].reference = i < 2;
  }
  rows[2].meas_slowdown = 2, rows[2].sim_slowdown = 2.2;  // +10%
  rows[3].meas_slowdown = 8, rows[3].sim_slowdown = 6;  // -25%
  rows[0].meas_time_s = 1, rows[0].sim_time_s = 1.1;
  rows[1].meas_time_s = 2, rows[1].sim_time_s = 1.8;
  rows[2].meas_time_s = 2, rows[2].sim_time_s = 2.2 * 1.1;
  rows[3].meas_time_s = 16, rows[3].sim_time_s = 6 * 1.8;
  const std::vector<FamilySummary> s =
      summarize(rows, {{"none", "", true}, {"green 66", "", false}});
  REQUIRE(s.size() == 2);
  CHECK(s[0].cases == 2);
  CHECK(s[0].time_mape == Approx((0.1 + 0.1) / 2));
  CHECK(s[1].meas_slowdown_gmean == Approx(std::sqrt(2.0 * 8.0)));
  CHECK(s[1].sim_slowdown_gmean == Approx(std::sqrt(2.2 * 6.0)));
  CHECK(s[1].slowdown_mape == Approx((0.1 + 0.25) / 2));
  CHECK(s[1].slowdown_worst == Approx(-0.25));
  CHECK(s[1].time_worst == Approx(6 * 1.8 / 16 - 1));
  CHECK(s[1].dram_cases == 0);
}

TEST_CASE("A table written as CSV reads back with the same rows and summary", "[validate]") {
  ValidateOptions o;
  o.config = kTeaching;
  const ValidationTable t =
      run_validation(ChipChange::kSmCount, write_temp("rt.csv", sm_file()), o);
  const std::string path = write_temp("table.csv", validation_to_csv({t}));
  const std::vector<ValidationTable> back = read_validation_csv(path);
  REQUIRE(back.size() == 1);
  CHECK(back[0].rows.size() == t.rows.size());
  CHECK(compare_tables({t}, back).empty());
  CHECK(validation_to_text(back[0], false)
            .substr(validation_to_text(back[0], false).find("\ncase")) ==
        validation_to_text(t, false).substr(validation_to_text(t, false).find("\ncase")));
  // A changed simulated figure is reported.
  ValidationTable changed = t;
  changed.rows[1].sim_time_s *= 1.01;
  const std::vector<std::string> diffs = compare_tables({changed}, back);
  REQUIRE(diffs.size() == 1);
  CHECK_THAT(diffs[0], Catch::Contains("sim_time_s"));
}

TEST_CASE("A malformed measurement file is an error naming the file, the line and the column",
          "[validate]") {
  ValidateOptions o;
  o.config = kTeaching;
  std::string bad = sm_file();
  bad.replace(bad.find("0.000008"), 8, "8 us");
  const std::string path = write_temp("bad.csv", bad);
  CHECK_THROWS_WITH(
      run_validation(ChipChange::kSmCount, path, o),
      Catch::Contains(path + ":6: column 13 (time_s): not a non-negative number: \"8 us\""));

  const std::string no_sms =
      write_temp("nosms.csv", std::string(kParams) + "kernel,time_s\n" + kNaive + "qk,1e-6\n");
  CHECK_THROWS_WITH(run_validation(ChipChange::kSmCount, no_sms, o),
                    Catch::Contains(no_sms + ":1: missing column \"sms\""));

  const std::string no_ref =
      std::string(kParams) + "kernel,time_s,sms_requested,sms\n" + kNaive + "qk,1e-6,2,2\n";
  const std::string no_ref_path = write_temp("noref.csv", no_ref);
  CHECK_THROWS_WITH(run_validation(ChipChange::kSmCount, no_ref_path, o),
                    Catch::Contains("no reference rows"));

  const std::string twice =
      write_temp("twice.csv", std::string(kParams) + "kernel,time_s,sms_requested,sms\n" + kNaive +
                                  "qk,1e-6,,4\n" + kNaive + "qk,1e-6,,4\n");
  CHECK_THROWS_WITH(
      run_validation(ChipChange::kSmCount, twice, o),
      Catch::Contains(twice + ":3: kernel qk of naive") && Catch::Contains("already on line 2"));

  o.only_regex = "flash2";
  CHECK_THROWS_WITH(run_validation(ChipChange::kSmCount, write_temp("only.csv", sm_file()), o),
                    Catch::Contains("no case matches --only \"flash2\""));
}

TEST_CASE("A carve-out that leaves no L2 is an error", "[validate]") {
  const HardwareConfig hw = load_config(kTeaching);
  const std::string csv = std::string(kParams) + "kernel,time_s,reserve,granted_bytes\n" + kNaive +
                          "qk,1e-6,none,\n" + kNaive + "qk,1e-6,100%," +
                          std::to_string(hw.l2.size.count) + "\n";
  ValidateOptions o;
  o.config = kTeaching;
  CHECK_THROWS_WITH(run_validation(ChipChange::kL2Size, write_temp("all.csv", csv), o),
                    Catch::Contains("not less than the config's l2.size"));
}
