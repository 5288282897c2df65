// `memwall validate` on the committed chip-change measurements: its figures on a subset equal
// independent `memwall run --set ...` results and the measured CSV's values, the committed tables
// (traces/measured/h200-*-validate.csv) are what the code computes now, and the tables pasted in
// traces/measured/h200-sm-count.md and h200-l2-size.md are those tables.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "sim/core/json.h"
#include "sim/hw/config_loader.h"
#include "studies/sweep_csv.h"
#include "studies/validate.h"
#include "tests/support/cli.h"

using namespace memwall;
using memwall::test::run_memwall;

namespace {

const char* kSmCount = "traces/measured/h200-sm-count.csv";
const char* kL2Size = "traces/measured/h200-l2-size.csv";
const char* kSmTable = "traces/measured/h200-sm-count-validate.csv";
const char* kL2Table = "traces/measured/h200-l2-size-validate.csv";
const char* kConfig = "configs/calibrated/h200.yaml";
/// The H200's carve-outs with the H100's measured stream rates (the H200's own not yet measured).
const char* kL2CarveoutTable = "traces/measured/h200-l2-size-carveout-validate.csv";
/// The same experiments on an H100, predicted by the H100 preset with the H200's calibration.
const char* kH100SmCount = "traces/measured/h100-sm-count.csv";
const char* kH100SmTable = "traces/measured/h100-sm-count-validate.csv";
const char* kH100L2Size = "traces/measured/h100-l2-size.csv";
const char* kH100L2Table = "traces/measured/h100-l2-size-validate.csv";
const char* kH100L2CarveoutTable = "traces/measured/h100-l2-size-carveout-validate.csv";
const char* kH100Config = "configs/calibrated/h100-sxm.yaml";

const ValidationRow& row_of(const ValidationTable& t, const std::string& case_prefix,
                            const std::string& kernel, const std::string& setting) {
  for (const ValidationRow& r : t.rows) {
    if (r.case_label.rfind(case_prefix, 0) == 0 && r.kernel == kernel && r.setting == setting)
      return r;
  }
  FAIL("no row " << case_prefix << " " << kernel << " " << setting);
  return t.rows.front();
}

/// `memwall run ARGS --json FILE`, parsed.
JsonValue run_json(const std::string& args, const std::string& name) {
  const std::string json = memwall::test::temp_path("validate", name);
  const auto r =
      run_memwall("run --config " + std::string(kConfig) + " " + args + " --json " + json);
  REQUIRE(r.code == 0);
  return parse_json(memwall::test::slurp(json), json);
}

double kernel_time(const JsonValue& report, const std::string& name) {
  for (const JsonValue& k : report.get("kernels")->items) {
    if (k.get("name")->text == name) return k.get("time_s")->number;
  }
  FAIL("no kernel " << name);
  return 0;
}

/// The measured CSV's cell `column` on 1-based line `line`.
std::string measured_cell(const CsvTable& csv, int line, const char* column) {
  for (std::size_t r = 0; r < csv.rows.size(); ++r) {
    if (csv.row_lines[r] == line) return csv.rows[r][static_cast<std::size_t>(csv.column(column))];
  }
  FAIL("no line " << line << " in " << csv.path);
  return "";
}

/// The text from the first "\ncase " line on (the per-case rows and the summary), without the
/// "wrote FILE" lines.
std::string tables_part(const std::string& text) {
  const std::size_t at = text.find("\ncase ");
  if (at == std::string::npos) return {};
  std::string out;
  for (std::size_t pos = at; pos < text.size();) {
    const std::size_t end = std::min(text.find('\n', pos + 1), text.size());
    const std::string line = text.substr(pos, end - pos);
    if (line.rfind("\nwrote ", 0) != 0) out += line;
    pos = end;
  }
  return out;
}

/// The output of the first pasted `$ memwall validate` block of `page`, as the page shows it.
std::string pasted_output(const std::string& page) {
  const std::size_t start = page.find("$ memwall validate");
  REQUIRE(start != std::string::npos);
  const std::size_t body = page.find('\n', start);
  const std::size_t end = page.find("\n```", body);
  REQUIRE(end != std::string::npos);
  return page.substr(body, end - body + 1);
}

}  // namespace

TEST_CASE(
    "validate --sm-count on a subset equals memwall run --set sm.count and the measured times",
    "[validate]") {
  const std::string csv = memwall::test::temp_path("validate", "sm.csv");
  const auto r =
      run_memwall(std::string("validate --sm-count ") + kSmCount + " --cases 2 -j 2 --csv " + csv);
  REQUIRE(r.code == 0);
  const std::vector<ValidationTable> tables = read_validation_csv(csv);
  REQUIRE(tables.size() == 1);
  const ValidationTable& t = tables[0];
  CHECK(t.cases == 2);

  const std::string flash2 =
      "--workload flash2 --batch 1 --heads 8 --seq 1024 --head-dim 64 --block-q 128 --block-kv 128 --stages 2";
  const double full = run_json(flash2, "f132.json").get("time_s")->number;
  for (const int sms : {66, 34, 16}) {
    const ValidationRow& v =
        row_of(t, "flash2 B=1 H=8 N=1024 d=64", "total", "green " + std::to_string(sms));
    const double sim =
        run_json(flash2 + " --set sm.count=" + std::to_string(sms), "f.json").get("time_s")->number;
    CHECK(v.sim_time_s == Approx(sim).epsilon(1e-6));
    CHECK(v.sim_slowdown == Approx(sim / full).epsilon(1e-6));
  }
  // The measured naive kernels are the mma.sync ones (a Hopper config runs wgmma unless asked).
  const std::string naive =
      "--workload naive --batch 1 --heads 8 --seq 1024 --head-dim 64 --block-q 128 --block-kv 128 --block-k 64 "
      "--softmax-rows 4 --gemm mma_sync --set sm.count=16";
  const JsonValue at16 = run_json(naive, "n16.json");
  for (const char* kernel : {"qk", "softmax", "pv"}) {
    CHECK(row_of(t, "naive B=1 H=8 N=1024 d=64", kernel, "green 16").sim_time_s ==
          Approx(kernel_time(at16, kernel)).epsilon(1e-6));
  }
  CHECK(row_of(t, "naive B=1 H=8 N=1024 d=64", "total", "green 16").sim_time_s ==
        Approx(at16.get("time_s")->number).epsilon(1e-6));

  // Measured: each row's time is its CSV line's; the slowdown is over the run without a green context.
  const CsvTable measured = read_csv(kSmCount);
  for (const ValidationRow& v : t.rows) {
    CHECK(v.meas_time_s ==
          Approx(std::atof(measured_cell(measured, v.line, "time_s").c_str())).epsilon(1e-9));
    CHECK(measured_cell(measured, v.line, "kernel") == v.kernel);
    const ValidationRow& ref = row_of(t, v.case_label, v.kernel, "none");
    CHECK(measured_cell(measured, ref.line, "sms_requested").empty());
    CHECK(v.meas_slowdown ==
          Approx(v.meas_time_s / ref.meas_time_s).epsilon(1e-7));  // %.9g in the CSV
    if (!v.reference) {
      CHECK(measured_cell(measured, v.line, "sms") ==
            v.setting.substr(std::string("green ").size()));
    }
  }
}

TEST_CASE(
    "validate --l2-size on a subset equals memwall run --set l2.size=(L2 - granted) and ncu's bytes",
    "[validate]") {
  const std::string csv = memwall::test::temp_path("validate", "l2.csv");
  const auto r =
      run_memwall(std::string("validate --l2-size ") + kL2Size + " --cases 1 --csv " + csv);
  REQUIRE(r.code == 0);
  const ValidationTable t = read_validation_csv(csv).at(0);
  const ValidationRow& v = row_of(t, "naive B=1 H=8 N=1024 d=64", "total", "reserve 100%");
  // The H200's 60 MiB less the 37.5 MiB the driver granted.
  CHECK(v.override_text == "l2.size=23592960B");
  const std::string naive =
      "--workload naive --batch 1 --heads 8 --seq 1024 --head-dim 64 --block-q 128 --block-kv 128 --block-k 64 "
      "--softmax-rows 4 --gemm mma_sync --set l2.size=23592960B";
  CHECK(v.sim_time_s == Approx(run_json(naive, "l2.json").get("time_s")->number).epsilon(1e-6));
  const JsonValue flushed = run_json(naive + " --flush-l2-between-kernels", "l2f.json");
  double dram = 0;
  for (const JsonValue& k : flushed.get("kernels")->items) {
    dram += k.get("dram_read_bytes")->number + k.get("dram_write_bytes")->number;
  }
  REQUIRE(v.sim_dram_bytes.has_value());
  CHECK(*v.sim_dram_bytes == Approx(dram).epsilon(1e-6));
  const CsvTable measured = read_csv(kL2Size);
  CHECK(*v.meas_dram_bytes ==
        Approx(std::atof(measured_cell(measured, v.line, "dram_read_bytes").c_str()) +
               std::atof(measured_cell(measured, v.line, "dram_write_bytes").c_str())));
  CHECK(measured_cell(measured, v.line, "granted_bytes") == "39321600");
}

TEST_CASE("The committed validation tables are what validate computes now", "[validate]") {
  // A subset of each, simulated again, agrees with the committed rows to 1e-6.
  struct Committed {
    const char* flag;
    const char* data;
    const char* table;
    const char* config;
    std::string extra;  ///< further options the table was made with
  };
  const std::string h100_rates =
      " --carveout-rates traces/measured/h100-l2-carveout/carveout-1.csv";
  for (const Committed& c :
       {Committed{"--sm-count", kSmCount, kSmTable, kConfig, ""},
        Committed{"--l2-size", kL2Size, kL2Table, kConfig, ""},
        Committed{"--l2-size", kL2Size, kL2CarveoutTable, kConfig, h100_rates},
        Committed{"--sm-count", kH100SmCount, kH100SmTable, kH100Config, ""},
        Committed{"--l2-size", kH100L2Size, kH100L2Table, kH100Config, ""},
        Committed{"--l2-size", kH100L2Size, kH100L2CarveoutTable, kH100Config, h100_rates}}) {
    INFO(c.table);
    const auto r = run_memwall(std::string("validate --config ") + c.config + " " + c.flag + " " +
                               c.data + c.extra + " --cases 2 -j 2 --summary --check " + c.table);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("every row agrees"));
    // Every committed row's measured figures are the measured CSV's.
    const CsvTable measured = read_csv(c.data);
    for (const ValidationTable& t : read_validation_csv(c.table)) {
      CHECK(t.measured_path == c.data);
      CHECK(t.config == c.config);
      for (const ValidationRow& v : t.rows) {
        CHECK(v.meas_time_s ==
              Approx(std::atof(measured_cell(measured, v.line, "time_s").c_str())).epsilon(1e-9));
      }
    }
  }
}

TEST_CASE("The tables pasted in the measurement pages are the committed tables", "[validate]") {
  for (const auto& [page, table] :
       {std::pair{"traces/measured/h200-sm-count.md", kSmTable},
        std::pair{"traces/measured/h200-l2-size.md", kL2Table},
        std::pair{"traces/measured/h100-sm-count.md", kH100SmTable},
        std::pair{"traces/measured/h100-l2-size.md", kH100L2CarveoutTable}}) {
    const auto r = run_memwall(std::string("validate --table ") + table);
    REQUIRE(r.code == 0);
    const std::string pasted = pasted_output(memwall::test::slurp(page));
    INFO(page);
    REQUIRE_FALSE(tables_part(r.out).empty());
    CHECK(tables_part(pasted) == tables_part(r.out));
  }
}

TEST_CASE("validate refuses a malformed CSV with exit 2 and an output over an input",
          "[validate]") {
  const std::string bad = memwall::test::temp_path("validate", "bad.csv");
  {
    std::string text = memwall::test::slurp(kSmCount);
    const std::size_t line3 = text.find('\n', text.find('\n') + 1) + 1;
    text.replace(text.find("2.678400e-05", line3), 12, "fast");
    std::ofstream(bad) << text;
  }
  const auto r = run_memwall("validate --sm-count " + bad);
  CHECK(r.code == 2);
  CHECK_THAT(r.out,
             Catch::Contains(bad + ":3: column 13 (time_s): not a non-negative number: \"fast\""));
  const auto clobber =
      run_memwall(std::string("validate --sm-count ") + kSmCount + " --csv " + kSmCount);
  CHECK(clobber.code == 2);
  CHECK_THAT(clobber.out, Catch::Contains("--csv"));
  const auto none = run_memwall("validate");
  CHECK(none.code == 2);
  CHECK_THAT(none.out, Catch::Contains("--sm-count FILE"));
}

namespace {

/// A rates file in l2_carveout.cu's columns: without a carve-out reads 4000 and writes 3000 GB/s;
/// with reserve P% reads 4000 · (1 − P/1000) and writes 3000 · (1 − P/200) (P = 100: half),
/// except at 25%, where both streams come out faster than without (noise the rates ignore).
std::string write_rates(const std::string& name, bool with_75 = true) {
  const std::string path = memwall::test::temp_path("validate", name);
  std::string text = "condition,granted_bytes,test,bytes,ms,gbps,cycles_per_load,ns_per_load\n";
  text +=
      "none,0,hbm_read,1,1,4000.0,,\nnone,0,hbm_write,1,1,3000.0,,\nnone,0,chase_l2,1,,,290,146\n";
  for (const int p : {25, 50, 75, 100}) {
    if (p == 75 && !with_75) continue;
    for (const char* c : {"limit ", "persisting "}) {
      // "limit" rows (no persisting lines) are not read: make them absurd.
      const bool limit = std::string(c) == "limit ";
      const double read = limit ? 1.0 : p == 25 ? 4000.0 * 1.018 : 4000.0 * (1 - p / 1000.0);
      const double write = limit ? 1.0 : p == 25 ? 3000.0 * 1.003 : 3000.0 * (1 - p / 200.0);
      const std::string cond = c + std::to_string(p) + "%";
      text += cond + ",0,hbm_read,1,1," + std::to_string(read) + ",,\n";
      text += cond + ",0,hbm_write,1,1," + std::to_string(write) + ",,\n";
    }
  }
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("validate --carveout-rates scales each carve-out's HBM rates by the measured streams'",
          "[validate]") {
  ValidateOptions o;
  o.only_regex = "naive B=1 H=8 N=1024 d=64 ";
  o.max_cases = 1;
  o.threads = 2;
  o.carveout_rates = write_rates("rates.csv");
  const ValidationTable t = run_validation(ChipChange::kL2Size, kL2Size, o);
  const HardwareConfig base = load_config(kConfig);
  const CsvTable measured = read_csv(kL2Size);
  int scaled = 0;
  for (const ChangeSetting& s : t.settings) {
    INFO(s.label << ": " << s.override_text);
    if (s.reference || s.label == "reserve 0%") {
      CHECK(s.override_text.find("hbm.") == std::string::npos);
      continue;
    }
    const double p = std::atof(s.label.substr(std::string("reserve ").size()).c_str());
    const auto fixed = [](double v) {
      char b[32];
      std::snprintf(b, sizeof b, "%.4f", v);
      return std::string(b);
    };
    // Faster than without a carve-out (25%) reads as unchanged.
    const double w = p == 25 ? 1.0 : 1 - p / 200;
    const double r = p == 25 ? 1.0 : 1 - p / 1000;
    CHECK_THAT(s.override_text,
               Catch::Contains(" hbm.write_rate=" + fixed(base.hbm.write_rate * w)));
    CHECK_THAT(s.override_text,
               Catch::Contains(" hbm.mixed_write_rate=" + fixed(base.hbm.mixed_write_rate * w)));
    CHECK_THAT(s.override_text,
               Catch::Contains(" efficiency.hbm=" + fixed(base.efficiency.hbm * r)));
    ++scaled;
  }
  CHECK(scaled == 4);
  // The simulated time at the full carve-out is `memwall run` with the same overrides.
  std::string set;
  for (const ChangeSetting& s : t.settings) {
    if (s.label != "reserve 100%") continue;
    for (const std::string& kv : setting_overrides(s.override_text)) set += " --set " + kv;
  }
  REQUIRE_FALSE(set.empty());
  const JsonValue at100 = run_json(
      "--workload naive --batch 1 --heads 8 --seq 1024 --head-dim 64 --block-q 128 --block-kv 128 "
      "--block-k 64 --softmax-rows 4 --gemm mma_sync" +
          set,
      "c100.json");
  CHECK(row_of(t, "naive B=1 H=8 N=1024 d=64", "total", "reserve 100%").sim_time_s ==
        Approx(at100.get("time_s")->number).epsilon(1e-6));
}

TEST_CASE("validate --carveout-rates refuses a file without the rates it needs, with exit 2",
          "[validate]") {
  const auto missing = run_memwall(std::string("validate --l2-size ") + kL2Size +
                                   " --cases 1 --carveout-rates " + write_rates("r75.csv", false));
  CHECK(missing.code == 2);
  CHECK_THAT(missing.out, Catch::Contains("reserve 75%"));
  CHECK_THAT(missing.out, Catch::Contains("no \"persisting 75%\" rows"));
  const std::string no_none = memwall::test::temp_path("validate", "nonone.csv");
  std::ofstream(no_none) << "condition,granted_bytes,test,bytes,ms,gbps\n"
                            "persisting 25%,0,hbm_read,1,1,3000\n";
  const auto bad = run_memwall(std::string("validate --l2-size ") + kL2Size +
                               " --cases 1 --carveout-rates " + no_none);
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out,
             Catch::Contains(no_none + ": no hbm_read and hbm_write rows for condition \"none\""));
  const auto alone =
      run_memwall(std::string("validate --sm-count ") + kSmCount + " --carveout-rates " + no_none);
  CHECK(alone.code == 2);
  CHECK_THAT(alone.out, Catch::Contains("--carveout-rates applies to --l2-size only"));
}
