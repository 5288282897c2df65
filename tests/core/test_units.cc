#include <catch2/catch.hpp>

#include "sim/core/error.h"
#include "sim/core/units.h"

using namespace memwall;

TEST_CASE("Sizes parse with binary and decimal prefixes", "[units]") {
  CHECK(parse_bytes("228 KiB").count == 228u * 1024u);
  CHECK(parse_bytes("50MiB").count == 50ull * 1024 * 1024);
  CHECK(parse_bytes("40 GB").count == 40'000'000'000ull);
  CHECK(parse_bytes("128 B").count == 128u);
  CHECK(parse_bytes(" 1.5 KiB ").count == 1536u);
}

TEST_CASE("Bad sizes are rejected with the reason", "[units]") {
  CHECK_THROWS_WITH(parse_bytes("228"), Catch::Contains("missing unit"));
  CHECK_THROWS_WITH(parse_bytes("228 parsecs"), Catch::Contains("unknown size unit"));
  CHECK_THROWS_WITH(parse_bytes("-4 KiB"), Catch::Contains("negative"));
  CHECK_THROWS_WITH(parse_bytes("0.3 B"), Catch::Contains("whole number"));
  CHECK_THROWS_WITH(parse_bytes("KiB"), Catch::Contains("expected a size"));
  CHECK_THROWS_WITH(parse_bytes("99999999 TiB"), Catch::Contains("64 bits"));
  CHECK_THROWS_AS(parse_bytes("nan KiB"), UnitError);
}

TEST_CASE("Bandwidths parse per second and per cycle", "[units]") {
  CHECK(parse_bandwidth("3.35 TB/s").bytes_per_second == Approx(3.35e12));
  CHECK(parse_bandwidth("1 GiB/s").bytes_per_second == Approx(1073741824.0));
  const Frequency clock{1.98e9};
  CHECK(parse_bandwidth("64 B/cycle", &clock).bytes_per_second == Approx(64 * 1.98e9));
  CHECK_THROWS_WITH(parse_bandwidth("64 B/cycle"), Catch::Contains("no clock"));
  CHECK_THROWS_WITH(parse_bandwidth("0 TB/s"), Catch::Contains("positive"));
  CHECK_THROWS_WITH(parse_bandwidth("-1 TB/s"), Catch::Contains("positive"));
  CHECK_THROWS_WITH(parse_bandwidth("3 TB"), Catch::Contains("unknown bandwidth unit"));
}

TEST_CASE("Frequencies and durations parse, cycles through the clock", "[units]") {
  CHECK(parse_frequency("1.98 GHz").hertz == Approx(1.98e9));
  CHECK(parse_frequency("1755 MHz").hertz == Approx(1.755e9));
  CHECK_THROWS_WITH(parse_frequency("0 GHz"), Catch::Contains("positive"));
  CHECK(parse_duration("200 ns") == 200'000);
  CHECK(parse_duration("1.5 us") == 1'500'000);
  const Frequency clock{2e9};
  CHECK(parse_duration("273 cycles", &clock) == 136'500);
  CHECK_THROWS_WITH(parse_duration("5 fortnights"), Catch::Contains("unknown duration unit"));
}

TEST_CASE("A clock converts cycles to ticks and back", "[units]") {
  const Frequency clock{1e9};
  CHECK(clock.cycles_to_ticks(3) == 3000);
  CHECK(clock.ticks_to_cycles(4500) == Approx(4.5));
}

TEST_CASE("A bandwidth gives the ticks a transfer holds it, rounded up", "[units]") {
  const Bandwidth bw{1e12};  // one byte per picosecond
  CHECK(bw.transfer_ticks(Bytes{128}) == 128);
  CHECK(Bandwidth{3e12}.transfer_ticks(Bytes{128}) == 43);  // 42.67 ps rounds up
}

TEST_CASE("Quantities format with the right prefix", "[units]") {
  CHECK(format_bytes(Bytes{50ull << 20}) == "50 MiB");
  CHECK(format_bytes(Bytes{1536}) == "1.5 KiB");
  CHECK(format_bandwidth(Bandwidth{3.35e12}) == "3.35 TB/s");
  CHECK(format_frequency(Frequency{1.98e9}) == "1.98 GHz");
  CHECK(format_si(9.89e14, "FLOP/s") == "989 TFLOP/s");
}
