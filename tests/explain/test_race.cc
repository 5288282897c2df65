#include <catch2/catch.hpp>

#include <algorithm>

#include "explain/race.h"
#include "sim/core/error.h"

using namespace memwall;
using namespace memwall::explain;

TEST_CASE("Naive and tiled attention give the same output to 1e-10", "[race]") {
  for (std::uint64_t n : {1u, 37u, 128u, 200u}) {
    for (std::uint64_t tile : {1u, 16u, 64u, 500u}) {
      const AttentionInputs in = make_attention_inputs(n, 16, 5);
      CHECK(max_abs_difference(naive_attention(in).output, tiled_attention(in, tile).output) <=
            1e-10);
    }
  }
}

TEST_CASE("Attention rows are convex combinations of the value rows", "[race]") {
  const AttentionInputs in = make_attention_inputs(50, 8, 2);
  const AttentionRun run = tiled_attention(in, 16);
  for (std::uint64_t x = 0; x < 8; ++x) {
    double lo = in.v[x], hi = in.v[x];
    for (std::uint64_t j = 0; j < 50; ++j) {
      lo = std::min(lo, in.v[j * 8 + x]);
      hi = std::max(hi, in.v[j * 8 + x]);
    }
    for (std::uint64_t i = 0; i < 50; ++i) {
      CHECK(run.output[i * 8 + x] >= lo - 1e-12);
      CHECK(run.output[i * 8 + x] <= hi + 1e-12);
    }
  }
}

TEST_CASE("Each implementation requests exactly the bytes of its formula", "[race]") {
  for (std::uint64_t n : {10u, 64u, 100u, 256u}) {
    const std::uint64_t d = 32, tile = 64;
    const AttentionInputs in = make_attention_inputs(n, d, 1);
    const AttentionRun naive = naive_attention(in);
    const AttentionRun tiled = tiled_attention(in, tile);
    const std::uint64_t b = std::min(tile, n);
    CHECK(naive.memory.total_bytes == (n * n + n * d) * 8);
    CHECK(naive.memory.peak_bytes == naive_attention_bytes(n, d));
    CHECK(tiled.memory.total_bytes == (b * b + 2 * b + n * d) * 8);
    CHECK(tiled.memory.peak_bytes == tiled_attention_bytes(n, d, tile));
    CHECK(naive.memory.current_bytes == 0u);
    CHECK(tiled.memory.current_bytes == 0u);
  }
}

TEST_CASE("As N doubles, naive memory grows about x4 and tiled about x2", "[race]") {
  const std::uint64_t d = 64, tile = 64;
  for (std::uint64_t n = 1024; n <= 8192; n *= 2) {
    const double naive_growth = static_cast<double>(naive_attention_bytes(2 * n, d)) /
                                static_cast<double>(naive_attention_bytes(n, d));
    const double tiled_growth = static_cast<double>(tiled_attention_bytes(2 * n, d, tile)) /
                                static_cast<double>(tiled_attention_bytes(n, d, tile));
    CHECK(naive_growth > 3.7);
    CHECK(naive_growth < 4.0);
    CHECK(tiled_growth > 1.9);
    CHECK(tiled_growth < 2.0);
    // The parts that depend on N grow exactly x4 (scores) and x2 (output).
    const std::uint64_t tile_part = (tile * tile + 2 * tile) * 8;
    CHECK(tiled_attention_bytes(2 * n, d, tile) - tile_part ==
          2 * (tiled_attention_bytes(n, d, tile) - tile_part));
  }
}

TEST_CASE("The race reports measured memory and agreement for every N", "[race]") {
  const RaceOptions options{.seqs = {64, 128}, .head_dim = 16, .tile = 32, .repeat = 1, .seed = 4};
  const std::vector<RaceRow> rows = run_race(options);
  REQUIRE(rows.size() == 2u);
  for (const RaceRow& r : rows) {
    CHECK(r.agree);
    CHECK(r.naive_memory.peak_bytes == naive_attention_bytes(r.seq, 16));
    CHECK(r.tiled_memory.peak_bytes == tiled_attention_bytes(r.seq, 16, 32));
    CHECK(r.naive_seconds > 0.0);
    CHECK(r.tiled_seconds > 0.0);
  }
  CHECK(format_race(options, rows).find("no HBM/SRAM split") != std::string::npos);
}

TEST_CASE("Bad race parameters are usage errors", "[race]") {
  CHECK_THROWS_AS(run_race({.seqs = {}}), UsageError);
  CHECK_THROWS_AS(run_race({.seqs = {0}}), UsageError);
  CHECK_THROWS_AS(run_race({.seqs = {kMaxRaceSeq + 1}}), UsageError);
  CHECK_THROWS_AS(run_race({.seqs = {16}, .head_dim = 0}), UsageError);
  CHECK_THROWS_AS(run_race({.seqs = {16}, .tile = 0}), UsageError);
  CHECK_THROWS_AS(run_race({.seqs = {16}, .repeat = 0}), UsageError);
}
