#include <catch2/catch.hpp>

#include <cmath>

#include "explain/ledger.h"
#include "sim/core/error.h"

using namespace memwall;
using namespace memwall::explain;

TEST_CASE("The rescaled online softmax agrees with the all-at-once softmax to 1e-14", "[ledger]") {
  for (std::uint64_t tile : {1u, 7u, 64u, 1000u, 5000u}) {
    for (bool late : {false, true}) {
      const LedgerResult r =
          run_ledger({.row_len = 1000, .tile = tile, .seed = 3, .late_max = late});
      CHECK(r.online_error <= 1e-14);
      CHECK(std::fabs(r.steps.back().l - r.reference_sum) <= 1e-14 * r.reference_sum);
      CHECK(r.steps.back().m_new == r.reference_max);
    }
  }
}

TEST_CASE("The ledger has one step per tile, the last one clipped to the row", "[ledger]") {
  const LedgerResult r = run_ledger({.row_len = 10, .tile = 4, .seed = 1, .late_max = false});
  REQUIRE(r.steps.size() == 3u);
  CHECK(r.steps[2].begin == 8u);
  CHECK(r.steps[2].end == 10u);
  CHECK(r.steps[0].rescale == 0.0);
  for (const LedgerStep& st : r.steps) {
    CHECK(st.rescale == std::exp(st.m_old - st.m_new));
    CHECK(st.m_new >= st.tile_max);
  }
}

TEST_CASE("A tile longer than the row streams the whole row as one tile", "[ledger]") {
  const LedgerResult r = run_ledger({.row_len = 5, .tile = 8, .seed = 1, .late_max = false});
  REQUIRE(r.steps.size() == 1u);
  CHECK(r.steps[0].end == 5u);
  CHECK(r.no_rescale_error == r.online_error);
}

TEST_CASE("Without the rescale, a maximum in the last tile gives a large error", "[ledger]") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const LedgerResult r =
        run_ledger({.row_len = 1024, .tile = 128, .seed = seed, .late_max = true});
    CHECK(r.argmax >= 1024u - 128u);
    CHECK(r.reference_max - kLedgerLateMaxGap >= r.steps[r.steps.size() - 2].m_new);
    CHECK(r.no_rescale_error > 1e-3);
    CHECK(r.online_error <= 1e-14);
  }
}

TEST_CASE("The ledger is deterministic per seed and differs between seeds", "[ledger]") {
  const LedgerOptions a{.row_len = 300, .tile = 32, .seed = 11, .late_max = false};
  LedgerOptions b = a;
  b.seed = 12;
  CHECK(format_ledger(run_ledger(a)) == format_ledger(run_ledger(a)));
  CHECK(run_ledger(a).scores == run_ledger(a).scores);
  CHECK(run_ledger(a).scores != run_ledger(b).scores);
}

TEST_CASE("A zero row length, a zero tile or an oversized row is a usage error", "[ledger]") {
  CHECK_THROWS_AS(run_ledger({.row_len = 0, .tile = 4}), UsageError);
  CHECK_THROWS_AS(run_ledger({.row_len = 8, .tile = 0}), UsageError);
  CHECK_THROWS_WITH(run_ledger({.row_len = kMaxLedgerRowLen + 1, .tile = 4}),
                    Catch::Contains("exceeds the limit"));
}
