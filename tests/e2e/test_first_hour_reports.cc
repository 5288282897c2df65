// Findings 14, 16, 17 and 21 of the first-hour walkthrough, as a user meets them at the command
// line: what a report says about how it was made, one flag vocabulary, progress and logging, and
// the calibrated config within reach. Expectations come from the configs and the library, never
// from the build's version text.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "sim/core/json.h"
#include "sim/core/units.h"
#include "sim/core/version.h"
#include "sim/hw/config_loader.h"
#include "sim/hw/config_schema.h"
#include "tests/support/cli.h"

namespace {

namespace fs = std::filesystem;

using memwall::test::run_memwall;
using memwall::test::slurp;

struct Scratch {
  fs::path dir =
      fs::temp_directory_path() / ("memwall-first-hour-reports-" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

constexpr const char* kSmall = "--seq 256 --head-dim 64 --heads 2";

/// What the memwall under test calls its build, "memwall 0.1.0 (git DESCRIBE)", from --version
/// (the binary's own text: it may have been linked at another commit than this test).
std::string build_text() {
  std::string text = run_memwall("--version").out;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

/// The number in the JSON object `v` under `key`.
double number_at(const memwall::JsonValue& v, const std::string& key) {
  const memwall::JsonValue* m = v.get(key);
  REQUIRE(m != nullptr);
  return m->number;
}

}  // namespace

TEST_CASE(
    "Finding 17: run --json records the build, the config as given, every override and the "
    "resolved values",
    "[first-hour][cli]") {
  const Scratch s;
  const std::vector<std::string> sets = {"hbm.bandwidth=7.2TB/s", "l2.size=30 MiB"};
  const auto r =
      run_memwall(std::string("run -c h200 -w flash2 ") + kSmall +
                  " --set hbm.bandwidth=7.2TB/s --set 'l2.size=30 MiB' --json " + (s / "r.json"));
  REQUIRE(r.code == 0);
  const memwall::JsonValue doc = memwall::parse_json(slurp(s / "r.json"), "r.json");
  // The build: the version of this library, and some git describe (its value is the build's).
  const memwall::JsonValue* build = doc.get("memwall");
  REQUIRE(build != nullptr);
  CHECK(build->get("version")->text == memwall::memwall_version());
  CHECK(build_text() == "memwall " + build->get("version")->text + " (git " +
                            build->get("git_describe")->text + ")");
  CHECK_FALSE(build->get("git_describe")->text.empty());

  const memwall::HardwareConfig hw = memwall::load_config("h200", sets);
  const memwall::JsonValue* config = doc.get("config");
  REQUIRE(config != nullptr);
  CHECK(config->get("name")->text == hw.name);
  CHECK(config->get("path")->text == "h200");
  CHECK(config->get("file")->text == memwall::resolve_config_path("h200"));
  const memwall::JsonValue* overrides = config->get("overrides");
  REQUIRE(overrides != nullptr);
  REQUIRE(overrides->items.size() == sets.size());
  for (std::size_t i = 0; i < sets.size(); ++i) CHECK(overrides->items[i].text == sets[i]);
  // Every key of the resolved config, in base units: the overridden ones at their new values.
  const memwall::JsonValue* values = config->get("values");
  REQUIRE(values != nullptr);
  CHECK(number_at(*values, "hbm.bandwidth") ==
        Approx(memwall::parse_bandwidth("7.2TB/s", nullptr).bytes_per_second));
  CHECK(number_at(*values, "l2.size") == static_cast<double>(memwall::parse_bytes("30 MiB").count));
  CHECK(number_at(*values, "sm.count") == static_cast<double>(hw.sm.count));
  CHECK(number_at(*values, "sm.clock") == Approx(hw.sm.clock.hertz));
  CHECK(number_at(*values, "l2.hit_latency") ==
        Approx(static_cast<double>(hw.l2.hit_latency) /
               static_cast<double>(memwall::kTicksPerSecond)));
  std::size_t keys = 0;
  for (const memwall::KeyDecl& key : memwall::config_schema()) keys += key.fetch != nullptr ? 1 : 0;
  CHECK(values->members.size() == keys);
}

TEST_CASE(
    "Finding 17: the text report's head names the config file, every override, the resolved "
    "values and the build",
    "[first-hour][cli]") {
  const auto r =
      run_memwall(std::string("run -c h200 -w flash2 ") + kSmall + " --set hbm.bandwidth=7.2TB/s");
  REQUIRE(r.code == 0);
  const memwall::HardwareConfig hw = memwall::load_config("h200", {"hbm.bandwidth=7.2TB/s"});
  const std::string head = r.out.substr(0, r.out.find("\n\n"));
  CHECK(head.find("config h200 (" + memwall::resolve_config_path("h200") +
                  ") --set hbm.bandwidth=7.2TB/s\n") != std::string::npos);
  CHECK(head.find(std::to_string(hw.sm.count) + " SMs at " +
                  memwall::format_frequency(hw.sm.clock)) != std::string::npos);
  CHECK(head.find("HBM " + memwall::format_bandwidth(hw.hbm.bandwidth)) != std::string::npos);
  CHECK(head.find(memwall::format_bytes(hw.l2.size) + " L2") != std::string::npos);
  CHECK(head.find("\n" + build_text()) != std::string::npos);
  CHECK(build_text().rfind(std::string("memwall ") + memwall::memwall_version() + " (git ", 0) ==
        0);
  // The same head for a list of workloads, after their parameter lines.
  const auto both = run_memwall(std::string("run -c h200 -w naive,flash2 ") + kSmall +
                                " --set hbm.bandwidth=7.2TB/s");
  REQUIRE(both.code == 0);
  const std::string both_head = both.out.substr(0, both.out.find("\n\n"));
  CHECK(both_head.find("  flash2: ") < both_head.find("config h200"));
  CHECK(both_head.find("\n" + build_text()) != std::string::npos);
}

TEST_CASE("Finding 17: a calibrated config's head lists the efficiencies that differ from 1",
          "[first-hour][cli]") {
  const auto r = run_memwall(std::string("run -c h200-calibrated -w flash2 ") + kSmall);
  REQUIRE(r.code == 0);
  const memwall::HardwareConfig hw = memwall::load_config("h200-calibrated");
  const memwall::KeyDecl* mma = memwall::find_key("efficiency.mma_sync");
  REQUIRE(mma != nullptr);
  CHECK(r.out.find("efficiency: ") != std::string::npos);
  CHECK(r.out.find("mma_sync " +
                   memwall::format_key_value(*mma, mma->fetch(hw), memwall::Frequency{})) !=
        std::string::npos);
  // tensor (wgmma) was not fitted: 1, not listed on the efficiency line.
  const std::size_t line = r.out.find("efficiency: ");
  const std::string efficiencies = r.out.substr(line, r.out.find('\n', line) - line);
  CHECK(efficiencies.find("tensor ") == std::string::npos);
  // sfu was fitted to 1, its default: not listed.
  CHECK(r.out.find("sfu ") == std::string::npos);
}

TEST_CASE(
    "Finding 17: a config that overrides its base's keys without a description says what it "
    "changed instead of inheriting the base's",
    "[first-hour][config]") {
  const Scratch s;
  {
    std::ofstream(s / "faster.yaml")
        << "extends: h200\nname: fast H200\nhbm:\n  bandwidth: 6.7 TB/s\n"
           "l2:\n  size: 30 MiB\n";
    std::ofstream(s / "renamed.yaml") << "extends: h200\nname: my H200\n";
    std::ofstream(s / "described.yaml")
        << "extends: h200\ndescription: mine\nhbm:\n  bandwidth: 6.7 TB/s\n";
  }
  const memwall::HardwareConfig base = memwall::load_config("h200");
  CHECK(memwall::load_config(s / "faster.yaml").description ==
        base.name + " with hbm.bandwidth = 6.7 TB/s, l2.size = 30 MiB");
  // Nothing of the base's changed: its description still holds.
  CHECK(memwall::load_config(s / "renamed.yaml").description == base.description);
  CHECK(memwall::load_config(s / "described.yaml").description == "mine");
  // A preset that overrides its base and describes itself keeps its own words.
  const std::string preset = slurp(memwall::resolve_config_path("hypothetical/h100-2x-hbm"));
  const std::size_t at = preset.find("\ndescription: ") + 14;
  CHECK(memwall::load_config("hypothetical/h100-2x-hbm").description ==
        preset.substr(at, preset.find('\n', at) - at));
  // `config show` prints the derived description.
  CHECK(run_memwall("config show " + (s / "faster.yaml"))
            .out.find(base.name + " with hbm.bandwidth = 6.7 TB/s") != std::string::npos);
}

TEST_CASE(
    "Finding 21: calibrate --evaluate prints the error table of the config as it is and writes "
    "nothing",
    "[first-hour][cli]") {
  const Scratch s;
  const auto before = fs::directory_iterator(s.dir) == fs::directory_iterator();
  REQUIRE(before);
  const std::string cmd = "cd " + s.dir.string() + " && " + MEMWALL_EXE +
                          " calibrate -c h200-calibrated --measured " +
                          fs::absolute("traces/measured/h200-sweep.csv").string() +
                          " --evaluate --eval-budget '16 MiB' -j 2 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = ::pclose(pipe);
  INFO(out);
  CHECK(WEXITSTATUS(status) == 0);
  const memwall::HardwareConfig hw = memwall::load_config("h200-calibrated");
  CHECK(out.find("Evaluated " + hw.name + " as it is (no fit)") != std::string::npos);
  CHECK(out.find("Per kernel (") != std::string::npos);
  CHECK(out.find("Summary (") != std::string::npos);
  CHECK(out.find("Fitted (") == std::string::npos);
  CHECK(out.find("wrote ") == std::string::npos);
  CHECK(fs::directory_iterator(s.dir) == fs::directory_iterator());
  // -o with --evaluate is a contradiction, refused before any work.
  const auto both =
      run_memwall("calibrate -c h200 --measured traces/measured/h200-sweep.csv --evaluate -o " +
                  (s / "x.yaml"));
  CHECK(both.code == 2);
  CHECK(both.out.find("--evaluate fits nothing and writes no config") != std::string::npos);
  // Without --evaluate, -o is still required, and the message points at --evaluate.
  const auto neither = run_memwall("calibrate -c h200 --measured traces/measured/h200-sweep.csv");
  CHECK(neither.code == 2);
  CHECK(neither.out.find("--evaluate prints the error table") != std::string::npos);
}

TEST_CASE("Finding 21: the calibrated configs are presets: listed, and loadable by either name",
          "[first-hour][cli]") {
  const auto list = run_memwall("config list");
  CHECK(list.out.find("h200-calibrated") != std::string::npos);
  const auto a = run_memwall(std::string("run -c h200-calibrated -w flash2 ") + kSmall);
  const auto b = run_memwall(std::string("run -c calibrated/h200 -w flash2 ") + kSmall);
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  // The same simulation; only the config's name as given differs in the head.
  CHECK(a.out.substr(a.out.find("\n\n")) == b.out.substr(b.out.find("\n\n")));
}

TEST_CASE(
    "Finding 14: --flush-l2 is the flag of run and replay too; the old spelling still works, "
    "hidden",
    "[first-hour][cli]") {
  const Scratch s;
  const std::string shape = std::string(" -w naive ") + kSmall;
  REQUIRE(run_memwall("run -c h200" + shape + " --flush-l2 --json " + (s / "new.json")).code == 0);
  REQUIRE(
      run_memwall("run -c h200" + shape + " --flush-l2-between-kernels --json " + (s / "old.json"))
          .code == 0);
  REQUIRE(run_memwall("run -c h200" + shape + " --json " + (s / "none.json")).code == 0);
  CHECK(slurp(s / "new.json") == slurp(s / "old.json"));
  CHECK(slurp(s / "new.json") != slurp(s / "none.json"));
  CHECK(memwall::parse_json(slurp(s / "new.json"), "new.json")
            .get("flush_l2_between_kernels")
            ->boolean);
  REQUIRE(
      run_memwall("trace -c h200 -w naive " + std::string(kSmall) + " -o " + (s / "n.mwt")).code ==
      0);
  REQUIRE(
      run_memwall("replay -c h200 " + (s / "n.mwt") + " --flush-l2 --json " + (s / "replayed.json"))
          .code == 0);
  CHECK(slurp(s / "replayed.json") == slurp(s / "new.json"));
  for (const char* command : {"run", "replay", "sweep", "io"}) {
    INFO(command);
    const std::string help = run_memwall(std::string(command) + " --help").out;
    CHECK(help.find("--flush-l2 ") != std::string::npos);
    CHECK(help.find("--flush-l2-between-kernels") == std::string::npos);
  }
}

TEST_CASE(
    "Finding 14: -c and -w are the short forms of --config and --workload in every command "
    "that takes them",
    "[first-hour][cli]") {
  for (const char* command : {"run", "replay", "trace", "verify", "sweep", "io", "calibrate",
                              "validate", "roofline", "traffic"}) {
    INFO(command);
    const std::string help = run_memwall(std::string(command) + " --help").out;
    // An option listed without its short form reads "  --config FILE" in the options.
    CHECK(help.find("\n  --config") == std::string::npos);
    CHECK(help.find("\n  --workload") == std::string::npos);
    CHECK(help.find("-c,--config") != std::string::npos);
    if (std::set<std::string>{"run", "trace", "verify", "sweep", "io"}.count(command) != 0) {
      CHECK(help.find("-w,--workload") != std::string::npos);
    }
  }
  // sweep and io take one workload, and say NAME, not LIST.
  CHECK(run_memwall("sweep --help").out.find("-w,--workload NAME") != std::string::npos);
  CHECK(run_memwall("io --help").out.find("-w,--workload NAME") != std::string::npos);
}

TEST_CASE(
    "Finding 14: a list given to run's one-value flags is refused naming the commands that "
    "take lists",
    "[first-hour][cli]") {
  for (const char* flag : {"--seq", "--head-dim", "--heads"}) {
    INFO(flag);
    const auto r = run_memwall(std::string("run -c h200 -w flash2 ") + flag + " 1024,2048");
    CHECK(r.code == 2);
    CHECK(r.out.find(std::string(flag) +
                     ": takes one number, got the list 1024,2048 (lists of values "
                     "are for memwall sweep and memwall io)") != std::string::npos);
  }
}

TEST_CASE(
    "Finding 14: run --json is an object for one workload and an array of the same objects "
    "for a list",
    "[first-hour][cli]") {
  const Scratch s;
  REQUIRE(
      run_memwall("run -c h200 -w flash2 " + std::string(kSmall) + " --json " + (s / "one.json"))
          .code == 0);
  REQUIRE(run_memwall("run -c h200 -w naive,flash2 " + std::string(kSmall) + " --json " +
                      (s / "two.json"))
              .code == 0);
  const memwall::JsonValue one = memwall::parse_json(slurp(s / "one.json"), "one.json");
  const memwall::JsonValue two = memwall::parse_json(slurp(s / "two.json"), "two.json");
  REQUIRE(one.type == memwall::JsonValue::Type::object);
  REQUIRE(two.type == memwall::JsonValue::Type::array);
  REQUIRE(two.items.size() == 2);
  std::vector<std::string> keys_one, keys_two;
  for (const auto& m : one.members) keys_one.push_back(m.key);
  for (const auto& m : two.items[1].members) keys_two.push_back(m.key);
  CHECK(keys_one == keys_two);
  CHECK(two.items[0].get("workload")->get("name")->text == "naive");
}

TEST_CASE("Finding 16: -v info says what runs; piped output carries no progress line",
          "[first-hour][cli]") {
  const auto r = run_memwall("-v info run -c h200 -w naive " + std::string(kSmall));
  REQUIRE(r.code == 0);
  CHECK(r.out.find("memwall: info: simulating naive (workload=naive") != std::string::npos);
  CHECK(r.out.find("memwall: info: kernel 1 (qk): ") != std::string::npos);
  CHECK(r.out.find("memwall: info: kernel 3 (pv): ") != std::string::npos);
  // stderr is a pipe here: no carriage-return progress line anywhere.
  CHECK(r.out.find('\r') == std::string::npos);
  const auto quiet = run_memwall("run -c h200 -w naive " + std::string(kSmall));
  CHECK(quiet.out.find("memwall: info:") == std::string::npos);
  CHECK(quiet.out.find('\r') == std::string::npos);
  const Scratch s;
  const auto sweep = run_memwall("-v info sweep -c h200 -w flash2 --seq 128,256 --head-dim 64 -o " +
                                 (s / "s.csv"));
  REQUIRE(sweep.code == 0);
  CHECK(sweep.out.find("memwall: info: sweep: ") != std::string::npos);
  CHECK(sweep.out.find('\r') == std::string::npos);
}

TEST_CASE("Finding 16: on a terminal, run draws a progress line of each kernel's CTAs",
          "[first-hour][cli]") {
  // `script` gives the command a terminal; without it (not util-linux), nothing to check here.
  if (std::system("command -v script >/dev/null 2>&1") != 0) {
    WARN("script(1) not found: the terminal case is not checked");
    return;
  }
  const Scratch s;
  const std::string cmd = "script -qec \"" + std::string(MEMWALL_EXE) + " run -c h200 -w naive " +
                          kSmall + "\" " + (s / "typescript") + " >/dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string shown = slurp(s / "typescript");
  CHECK(shown.find("naive kernel 1 (qk) [") != std::string::npos);
  CHECK(shown.find(" CTAs ") != std::string::npos);
}

TEST_CASE(
    "Finding 16: --what-if takes -j; the tables do not depend on it and are computed once for "
    "text and JSON",
    "[first-hour][cli]") {
  const Scratch s;
  const std::string base =
      "run -c h200 -w flash2 " + std::string(kSmall) + " --what-if hbm-x2,l2-x2";
  const auto one = run_memwall(base + " -j 1 --what-if-json " + (s / "w1.json"));
  const auto three = run_memwall(base + " -j 3 --what-if-json " + (s / "w3.json"));
  REQUIRE(one.code == 0);
  REQUIRE(three.code == 0);
  CHECK(one.out == three.out);
  CHECK(slurp(s / "w1.json") == slurp(s / "w3.json"));
  const auto logged = run_memwall("-v info " + base + " -j 2");
  CHECK(logged.out.find("memwall: info: what-if hbm-x2: --set hbm.bandwidth=") !=
        std::string::npos);
  CHECK(run_memwall("run --help").out.find("-j,--threads") != std::string::npos);
}

TEST_CASE("Finding 21: make demo says which config it simulates and why, and explains its terms",
          "[first-hour][cli]") {
  if (std::system("command -v make >/dev/null 2>&1") != 0) {
    WARN("make not found: the demo is not checked");
    return;
  }
  // The demo's recipe only (its build and deps steps taken as done), on the memwall under test.
  const std::string build = fs::path(MEMWALL_EXE).parent_path().string();
  const std::string cmd =
      "make -s -o build -o deps demo BUILD=" + build + " DEMO_SHAPE='" + kSmall + "' 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  CHECK(::pclose(pipe) == 0);
  INFO(out);
  CHECK(out.find("memwall demo: naive attention vs FlashAttention-2 on configs/h200.yaml") !=
        std::string::npos);
  CHECK(out.find("datasheet peaks, every efficiency 1") != std::string::npos);
  CHECK(out.find("DEMO_CONFIG=h200-calibrated") != std::string::npos);
  CHECK(out.find("config configs/h200.yaml\n") != std::string::npos);
  for (const char* term :
       {"DRAM ", "SM->L2", "CTA ", "SM clock ", "SM time ", "1 GiB = 2^30 bytes", "1 TB/s ="}) {
    CHECK(out.find(term, out.find("How to read it:")) != std::string::npos);
  }
}
