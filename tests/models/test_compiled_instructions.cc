// The warp-instruction terms of the kernels models/cuda compiles: the table the models use equals
// the "terms" lines that traces/measured/h200-issue-probe/analyze.py and law.py fit from the
// committed ncu counters (analyze.txt, law.txt), and a shape outside it is estimated from the
// kernel's nearest measured one.

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>

#include "models/compiled_instructions.h"

namespace memwall {
namespace {

using Row = std::tuple<std::string, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t,
                       std::uint64_t, std::uint64_t, std::uint64_t>;

/// The "terms ..." lines of a committed analysis output.
std::set<Row> terms_lines(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::set<Row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("terms ", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    Row r;
    fields >> std::get<0>(r) >> std::get<1>(r) >> std::get<2>(r) >> std::get<3>(r) >>
        std::get<4>(r) >> std::get<5>(r) >> std::get<6>(r) >> std::get<7>(r);
    REQUIRE(fields);
    rows.insert(r);
  }
  return rows;
}

}  // namespace

TEST_CASE("the compiled kernels' instruction terms are the probe's fitted ones", "[models]") {
  std::set<Row> file = terms_lines("traces/measured/h200-issue-probe/analyze.txt");
  const std::set<Row> bwd = terms_lines("traces/measured/h200-issue-probe/law.txt");
  CHECK(file.size() == 16);
  CHECK(bwd.size() == 8);
  file.insert(bwd.begin(), bwd.end());
  std::set<Row> table;
  for (const InstructionTerms& t : compiled_instruction_terms()) {
    table.insert({std::string(t.kernel), t.head_dim, t.block_a, t.block_b, t.stages, t.per_step,
                  t.per_masked_step, t.per_cta});
  }
  CHECK(table == file);
}

TEST_CASE("kernel_instructions: measured where compiled, else scaled by a step's MMA work",
          "[models]") {
  const KernelInstructions m = kernel_instructions("flash2_fwd", 128, 128, 64, 2);
  CHECK(m.measured);
  CHECK(m.terms.per_step == 7844);
  CHECK(m.terms.per_cta == 7124);
  // 128 x 256 tiles at d = 128: twice the MMA work of a 128 x 64 tile at d = 128 (the first
  // listed at that head dim, 64 x 64: 4348 per tile) — the nearest head dim's first entry.
  const KernelInstructions e = kernel_instructions("flash2_fwd", 128, 128, 256, 2);
  CHECK_FALSE(e.measured);
  const InstructionTerms& base = kernel_instructions("flash2_fwd", 128, 64, 64, 2).terms;
  CHECK(e.terms.per_step == base.per_step * 8);
  CHECK(e.terms.per_cta == base.per_cta * 8);
  // d = 96 is as near 64 as 128: the smaller; work (128·128·96) / (64·64·64) = 6.
  const KernelInstructions h = kernel_instructions("flash2_fwd", 96, 128, 128, 2);
  const InstructionTerms& h64 = kernel_instructions("flash2_fwd", 64, 64, 64, 2).terms;
  CHECK(h.terms.per_step == h64.per_step * 6);
  // A masked-tile term only where the kernel has one.
  CHECK(kernel_instructions("flash2_fwd_variant", 64, 128, 128, 2).terms.per_masked_step == 1111);
  CHECK(kernel_instructions("flash2_fwd", 64, 128, 128, 2).terms.per_masked_step == 0);
  CHECK_THROWS_AS(kernel_instructions("no_such_kernel", 64, 128, 128, 2), std::logic_error);
}

TEST_CASE("dependent_issue_cycles: 1 + L of the lone-warp rows of the stall probe", "[models]") {
  // traces/measured/h100-stall-probe/analyze.txt, part 1: the kernel (37 characters, cut), CTAs,
  // w (warps per scheduler), T, I, T+I, chain, L, ... The chain law is measured where w = 1.
  std::ifstream in("traces/measured/h100-stall-probe/analyze.txt");
  REQUIRE(in);
  std::string line;
  double plain = 1e9, variant = 1e9;
  int lone_rows = 0;
  while (std::getline(in, line)) {
    if (line.rfind("flash2_fwd", 0) != 0 || line.size() < 40) continue;
    std::istringstream fields(line.substr(37));
    double ctas = 0, w = 0, t = 0, i = 0, ti = 0, chain = 0, l = 0;
    fields >> ctas >> w >> t >> i >> ti >> chain >> l;
    REQUIRE(fields);
    if (w > 1.005) continue;
    ++lone_rows;
    CHECK(chain > ti);  // the chain, not the pipes, binds a lone warp
    double& least = line.rfind("flash2_fwd_variant", 0) == 0 ? variant : plain;
    least = std::min(least, l);
  }
  CHECK(lone_rows == 4);
  CHECK(dependent_issue_cycles("flash2_fwd", 128) == Approx(1.0 + plain));
  CHECK(dependent_issue_cycles("flash2_fwd_variant", 128) == Approx(1.0 + variant));
  CHECK(dependent_issue_cycles("qk", 128) == 0.0);
}

TEST_CASE(
    "dependent_issue_cycles at d = 64 and the combine's chain per round: what "
    "h100-variant-stalls measured",
    "[models]") {
  // traces/measured/h100-variant-stalls/analyze.txt: the variant kernel's lone-warp row at
  // d = 64 ("N=1024 d=64 ... w 1.00 L 1.75") and the combine's chain line ("... 3497 cycles +
  // 243.0 per round of O_accum loads").
  std::ifstream in("traces/measured/h100-variant-stalls/analyze.txt");
  REQUIRE(in);
  std::string line;
  double l64 = -1, per_round = -1;
  while (std::getline(in, line)) {
    const auto at = [&](const std::string& key) { return line.find(key); };
    if (at("N=1024 d=64 ") != std::string::npos && at(" w 1.00 L ") != std::string::npos) {
      l64 = std::stod(line.substr(at(" w 1.00 L ") + 10));
    }
    if (at("own dependency chain per warp") != std::string::npos) {
      const std::size_t plus = at(" cycles + ");
      REQUIRE(plus != std::string::npos);
      per_round = std::stod(line.substr(plus + 10));
    }
  }
  REQUIRE(l64 > 0);
  REQUIRE(per_round > 0);
  CHECK(dependent_issue_cycles("flash2_fwd_variant", 64) == Approx(1.0 + l64));
  CHECK(combine_round_chain_cycles() == Approx(per_round));
}

}  // namespace memwall
