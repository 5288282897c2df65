// The coursework tutorial (docs/tutorial-io-complexity.md): its commands run through the built
// `memwall` executable, the coursework case's bytes equal the closed forms derived in the text,
// and the exercise answers hold.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/core/json.h"
#include "sim/hw/config.h"
#include "sim/hw/config_loader.h"
#include "tests/support/cli.h"

using namespace memwall;

namespace {

using memwall::test::run_memwall;
using memwall::test::slurp;
using Result = memwall::test::CliResult;

const std::string kTeaching = "configs/hypothetical/teaching-gpu.yaml";

std::string temp_path(const std::string& name) {
  return memwall::test::temp_path("tutorial", name);
}

/// Runs `args --json FILE` and returns the parsed JSON (the command must succeed).
JsonValue run_json(const std::string& args) {
  const std::string json = temp_path("out.json");
  const Result r = run_memwall(args + " --json " + json);
  INFO(r.out);
  REQUIRE(r.code == 0);
  JsonValue doc = parse_json(slurp(json), json);
  std::filesystem::remove(json);
  return doc;
}

std::uint64_t integer(const JsonValue* v) {
  REQUIRE(v != nullptr);
  return std::stoull(v->text);
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

/// The tutorial's closed form for naive attention (one head, blocks bm = bn = 128), in bytes:
/// reads Nd·⌈N/bn⌉ (Q) + Nd·⌈N/bm⌉ (K) + N² (S) + N² (P) + Nd·⌈N/bm⌉ (V) elements,
/// writes N² (S) + N² (P) + Nd (O) elements.
struct NaiveBytes {
  std::uint64_t read = 0;
  std::uint64_t write = 0;
};

NaiveBytes naive_bytes(std::uint64_t n, std::uint64_t d, std::uint64_t s) {
  const std::uint64_t tiles = ceil_div(n, 128);
  NaiveBytes b;
  b.read = s * (3 * n * d * tiles + 2 * n * n);
  b.write = s * (2 * n * n + n * d);
  return b;
}

}  // namespace

TEST_CASE("The coursework case's HBM bytes in the two-level model equal the tutorial's closed form",
          "[cli][tutorial]") {
  const std::uint64_t n = 1024, d = 64, s = 2;
  const NaiveBytes expected = naive_bytes(n, d, s);
  const JsonValue doc =
      run_json("io --config " + kTeaching + " --workload naive --seq 1024 --head-dim 64 --ideal");
  const JsonValue& point = doc.get("points")->items.at(0);
  CHECK(integer(point.get("closed_form_bytes")) == expected.read + expected.write);
  CHECK(integer(point.get("sim_dram_bytes")) == expected.read + expected.write);
  CHECK(integer(point.get("sim_l2_bytes")) == expected.read + expected.write);
}

TEST_CASE("The coursework case on the teaching GPU requests the closed form's bytes from the L2",
          "[cli][tutorial]") {
  const std::uint64_t n = 1024, d = 64, s = 2;
  const NaiveBytes expected = naive_bytes(n, d, s);
  const JsonValue doc =
      run_json("run --config " + kTeaching + " --workload naive --seq 1024 --head-dim 64");
  CHECK(integer(doc.get("l2_read_bytes")) == expected.read);
  CHECK(integer(doc.get("l2_write_bytes")) == expected.write);
  // S (N²·s) does not fit in the 1 MiB L2, so the softmax kernel reads all of it from DRAM.
  const HardwareConfig config = load_config(kTeaching);
  REQUIRE(n * n * s > config.l2.size.count);
  const JsonValue* s_tensor = doc.get("dram_bytes_by_tensor")->get("S");
  CHECK(integer(s_tensor->get("read")) == n * n * s);
}

TEST_CASE("Tiled attention on the teaching GPU reads only Q, K and V from DRAM, once",
          "[cli][tutorial]") {
  const std::uint64_t n = 1024, d = 64, s = 2;
  const JsonValue doc = run_json("run --config " + kTeaching +
                                 " --workload flash2 --seq 1024 --head-dim 64 --block-kv 64");
  CHECK(integer(doc.get("dram_read_bytes")) == 3 * n * d * s);
  CHECK(integer(doc.get("dram_write_bytes")) == 0);
  // O (N·d·s) and the fp32 logsumexp L (4N) stay dirty in the L2.
  CHECK(integer(doc.get("dram_dirty_bytes_at_end")) == n * d * s + 4 * n);
  // SM→L2 reads follow the closed form Nd + 2Nd·⌈N/Br⌉ elements with Br = 128.
  CHECK(integer(doc.get("l2_read_bytes")) == s * (n * d + 2 * n * d * ceil_div(n, 128)));
}

TEST_CASE("Exercise: naive at N = 512 moves the closed form's bytes", "[cli][tutorial]") {
  const NaiveBytes expected = naive_bytes(512, 64, 2);
  const JsonValue doc = run_json("trace --workload naive --seq 512 --head-dim 64 --counts");
  CHECK(integer(doc.get("global_read_bytes")) == expected.read);
  CHECK(integer(doc.get("global_write_bytes")) == expected.write);
  const Result r = run_memwall("trace --workload naive --seq 512 --head-dim 64 --counts");
  CHECK(r.out.find("total                            " + std::to_string(expected.read)) !=
        std::string::npos);
}

TEST_CASE("Exercise: the largest flash2 block_kv that fits the teaching GPU at block_q 128",
          "[cli][tutorial]") {
  const HardwareConfig config = load_config(kTeaching);
  // (Br + 2·stages·Bc)·d·s <= smem_per_block, with Br = 128, stages = 2, d = 64, s = 2.
  const std::uint64_t limit = config.sm.smem_per_block.count;
  const std::uint64_t bc = (limit / (64 * 2) - 128) / (2 * 2);
  const Result r = run_memwall("run --config " + kTeaching + " --workload flash2 --seq 1024");
  CHECK(r.code == 2);
  CHECK(r.out.find("block_kv <= " + std::to_string(bc) + " fits at block_q 128") !=
        std::string::npos);
  CHECK(run_memwall("run --config " + kTeaching + " --workload flash2 --seq 256 --block-kv " +
                    std::to_string(bc))
            .code == 0);
  CHECK(run_memwall("run --config " + kTeaching + " --workload flash2 --seq 256 --block-kv " +
                    std::to_string(bc + 1))
            .code == 2);
}

TEST_CASE("Exercise: flash2's ideal HBM bytes with Br = 64 are Nd + 2Nd·N/Br elements plus O and L",
          "[cli][tutorial]") {
  const std::uint64_t n = 1024, d = 64, s = 2;
  const std::uint64_t expected = s * (n * d + 2 * n * d * (n / 64)) + s * n * d + 4 * n;
  const JsonValue doc =
      run_json("io --config " + kTeaching +
               " --workload flash2 --seq 1024 --head-dim 64 --block-q 64 --block-kv 64 --ideal");
  CHECK(integer(doc.get("points")->items.at(0).get("sim_dram_bytes")) == expected);
}
