#pragma once
/// Typed physical quantities and their parsing from strings with units.
///
/// Time is integer picoseconds (`Tick`); sizes are `Bytes`; rates are `Bandwidth` (bytes per
/// second) and `Frequency` (hertz). A raw integer never means cycles or bytes: conversions between
/// clock domains go through `Frequency::cycles_to_ticks` / `ticks_to_cycles`.

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace memwall {

/// Simulated time in integer picoseconds. Signed so that differences are safe.
using Tick = std::int64_t;

inline constexpr Tick kTicksPerSecond = 1'000'000'000'000;

/// The latest tick a simulation may reach: 2^62 ps, about 53 days of simulated time. Every
/// accumulator of time (a reservation's next free tick, a pipe's, an event's tick) is checked
/// against it, and every single step (a latency, one transfer, one cycle) is at most
/// kMaxStepTicks, so no sum of a bounded tick and a few steps can wrap a 64-bit Tick.
inline constexpr Tick kMaxTick = Tick{1} << 62;
/// The longest single step a config may imply: 1 s (one latency, one sector's transfer on one
/// channel or port, one cycle). Longer ones are config errors naming the key and this bound.
inline constexpr Tick kMaxStepTicks = kTicksPerSecond;

/// Throws UsageError: `what` would end after kMaxTick. Out of line, so that the checks on the hot
/// path stay one compare and a never-taken branch.
[[noreturn]] void throw_tick_overflow(const char* what, Tick start, Tick duration);

/// start + duration, or throw_tick_overflow when the end would pass kMaxTick (both are >= 0).
inline Tick checked_end(Tick start, Tick duration, const char* what) {
  if (duration > kMaxTick - start) [[unlikely]]
    throw_tick_overflow(what, start, duration);
  return start + duration;
}

/// A sum of many durations (a kernel's queueing summed over every request): 128 bits, so that it
/// cannot overflow (at most 2^64 terms of at most 2^62 ps each), where a Tick sum of waits near the
/// time bound would.
__extension__ typedef unsigned __int128 TickSum;

/// Ticks in seconds.
inline double seconds(Tick t) {
  return static_cast<double>(t) / static_cast<double>(kTicksPerSecond);
}
/// A sum of ticks in seconds (the same double as seconds(Tick) below 2^63).
inline double seconds(TickSum t) {
  return static_cast<double>(t) / static_cast<double>(kTicksPerSecond);
}

/// A size or a count of bytes.
struct Bytes {
  std::uint64_t count = 0;
  constexpr auto operator<=>(const Bytes&) const = default;
  constexpr Bytes operator+(Bytes o) const { return {count + o.count}; }
  constexpr Bytes& operator+=(Bytes o) {
    count += o.count;
    return *this;
  }
};

/// A data rate in bytes per second.
struct Bandwidth {
  double bytes_per_second = 0.0;
  constexpr auto operator<=>(const Bandwidth&) const = default;
  /// Ticks needed to move `bytes` at this rate, rounded up (so that a transfer never takes 0 ps).
  Tick transfer_ticks(Bytes bytes) const;
};

/// A clock frequency in hertz.
struct Frequency {
  double hertz = 0.0;
  constexpr auto operator<=>(const Frequency&) const = default;
  /// Length of one cycle in picoseconds (not rounded).
  double period_ps() const { return 1e12 / hertz; }
  /// Ticks spanned by `cycles` cycles of this clock, rounded to the nearest tick.
  Tick cycles_to_ticks(double cycles) const;
  /// Cycles of this clock spanned by `ticks` (fractional).
  double ticks_to_cycles(Tick ticks) const;
};

/// Parses a size: a number and a unit, e.g. "228 KiB", "50MiB", "40 GB", "128 B".
/// Binary (KiB, MiB, GiB, TiB) and decimal (kB/KB, MB, GB, TB) prefixes; the unit is required.
/// Throws UnitError on a missing or unknown unit, a negative, fractional-byte or overflowing value.
Bytes parse_bytes(std::string_view text);

/// Parses a bandwidth, e.g. "3.35 TB/s", "900 GB/s", "64 B/cycle" (per cycle of `clock`).
/// A per-cycle value needs `clock` (hertz > 0), otherwise UnitError.
Bandwidth parse_bandwidth(std::string_view text, const Frequency* clock = nullptr);

/// Parses a frequency, e.g. "1.98 GHz", "1755 MHz".
Frequency parse_frequency(std::string_view text);

/// Parses a duration into ticks, e.g. "200 ns", "1.5 us", "500 ps", or "273 cycles" (of `clock`).
Tick parse_duration(std::string_view text, const Frequency* clock = nullptr);

/// Formats with a binary prefix, e.g. "50 MiB", "228 KiB", "1.5 KiB", "100 B".
std::string format_bytes(Bytes b);
/// Formats with a decimal prefix, e.g. "3.35 TB/s".
std::string format_bandwidth(Bandwidth bw);
/// Formats with a decimal prefix, e.g. "1.98 GHz".
std::string format_frequency(Frequency f);
/// Formats a duration, e.g. "273 ns", "1.20 ms".
std::string format_duration(Tick t);
/// Formats a duration given in seconds as format_duration does (rounded to a tick).
std::string format_duration_seconds(double seconds);
/// Formats a count with an SI prefix and a unit, e.g. format_si(9.89e14, "FLOP/s") = "989 TFLOP/s".
std::string format_si(double value, std::string_view unit);
/// The shortest text that reads back as exactly `v` (std::to_chars), e.g. "2.6149801e-05".
std::string format_shortest(double v);

}  // namespace memwall
