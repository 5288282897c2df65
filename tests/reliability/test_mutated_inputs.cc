// Seeded mutation tests of the input readers that the libFuzzer harnesses cannot reach (the
// calibration's measured-case reader needs the models library, which clang 14 does not compile)
// and a quick pass over the others in the normal and sanitizer builds: thousands of damaged
// copies of real inputs, each of which must either be read or rejected with a memwall::Error —
// never another exception, a crash or a sanitizer report.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/hw/config_loader.h"
#include "studies/calibration_measured.h"
#include "studies/sweep_csv.h"
#include "tests/reliability/process.h"

using namespace memwall;
using namespace memwall::reliability;

namespace {

/// Cells that readers of numbers and names tend to mishandle.
const std::vector<std::string> kNastyCells = {"",
                                              "0",
                                              "-1",
                                              "nan",
                                              "inf",
                                              "-inf",
                                              "1e999",
                                              "-1e999",
                                              "18446744073709551616",
                                              "99999999999999999999999",
                                              "0x10",
                                              " 1",
                                              "1 ",
                                              "abc",
                                              "\"",
                                              "\"\"",
                                              "1,2",
                                              "4294967296",
                                              "2147483648",
                                              "fp64",
                                              "flash3",
                                              "total",
                                              "1e-400",
                                              "+",
                                              "."};

/// One random edit of `text`: flip, insert or delete bytes, duplicate or drop a line, or put a
/// nasty value into a cell.
std::string mutate(std::string text, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return n ? static_cast<std::size_t>(rng() % n) : 0; };
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 6) {
      case 0:
        if (!text.empty()) text[pick(text.size())] = static_cast<char>(rng() & 0xFF);
        break;
      case 1: text.insert(pick(text.size() + 1), 1, "\n,\"\r0-9e "[pick(9)]); break;
      case 2: {
        const std::size_t at = pick(text.size() + 1);
        text.erase(at, pick(40));
        break;
      }
      case 3: {  // duplicate a line
        const std::size_t at = text.rfind('\n', pick(text.size() + 1));
        const std::size_t start = at == std::string::npos ? 0 : at + 1;
        const std::size_t end = text.find('\n', start);
        const std::string line =
            text.substr(start, end == std::string::npos ? end : end - start + 1);
        text.insert(start, line);
        break;
      }
      case 4: {  // drop a line
        const std::size_t start = text.find('\n', pick(text.size() + 1));
        if (start == std::string::npos) break;
        const std::size_t end = text.find('\n', start + 1);
        text.erase(start, end == std::string::npos ? std::string::npos : end - start);
        break;
      }
      default: {  // replace a cell (or a YAML value) with a nasty one
        std::size_t at = pick(text.size() + 1);
        std::size_t end = text.find_first_of(",\n", at);
        if (end == std::string::npos) end = text.size();
        text.replace(at, end - at, kNastyCells[pick(kNastyCells.size())]);
        break;
      }
    }
  }
  return text;
}

/// Feeds `count` mutations of `seed_text` (written to `path`) to `read`; each must succeed or
/// throw memwall::Error. Returns how many were rejected.
int mutate_and_read(const std::string& seed_text, const std::string& path, int count,
                    std::uint64_t seed, const std::function<void(const std::string&)>& read) {
  std::mt19937_64 rng(seed);
  int rejected = 0;
  for (int i = 0; i < count; ++i) {
    const std::string text = mutate(seed_text, rng);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    try {
      read(path);
    } catch (const Error&) {
      ++rejected;
    } catch (const std::exception& e) {
      INFO("mutation " << i << " (seed " << seed << ") of the input:\n" << text);
      FAIL("not a memwall::Error: " << e.what());
    }
  }
  return rejected;
}

/// The first `lines` lines of a file.
std::string head(const std::string& path, int lines) {
  std::ifstream in(path, std::ios::binary);
  std::string out, line;
  for (int i = 0; i < lines && std::getline(in, line); ++i) out += line + "\n";
  return out;
}

}  // namespace

TEST_CASE(
    "Damaged measured CSVs are read or rejected with a clear error by the calibration "
    "reader",
    "[mutation][csv]") {
  const std::string seed = head("traces/measured/h200-sweep.csv", 40);
  REQUIRE(!seed.empty());
  const TempDir dir("mut-measured");
  std::ofstream(dir / "seed.csv") << seed;
  REQUIRE_NOTHROW(read_measured_cases(dir / "seed.csv"));
  const int rejected = mutate_and_read(seed, dir / "m.csv", 2000, 1,
                                       [](const std::string& p) { (void)read_measured_cases(p); });
  CHECK(rejected > 0);  // the mutations do reach the error paths
}

TEST_CASE("Damaged sweep shards are merged or rejected with a clear error", "[mutation][csv]") {
  const std::string shard = "point,points,seq,time_s\n0,3,128,1.5e-06\n2,3,512,\"a,\"\"b\"\"\"\n";
  const std::string other = "point,points,seq,time_s\n1,3,256,3e-06\n";
  const TempDir dir("mut-merge");
  std::ofstream(dir / "other.csv") << other;
  const std::string other_path = dir / "other.csv";
  mutate_and_read(shard, dir / "s.csv", 2000, 2, [&](const std::string& p) {
    (void)read_csv(p);
    (void)merge_shards({p, other_path});
  });
}

TEST_CASE("Damaged preset configs are loaded or rejected with a ConfigError",
          "[mutation][config]") {
  const std::string seed = slurp("configs/hypothetical/teaching-gpu.yaml");
  REQUIRE(!seed.empty());
  const TempDir dir("mut-config");
  const int rejected = mutate_and_read(seed, dir / "c.yaml", 1000, 3, [](const std::string& p) {
    const HardwareConfig config = load_config(p);
    validate_config(config);
  });
  CHECK(rejected > 0);
}
