#pragma once
/// The declaration table of the hardware config: every YAML key with its type, unit hint,
/// description, default (or "required"), bounds and the HardwareConfig field it lands in.
///
/// Both the loader (sim/hw/config_loader.h) and the generated reference
/// (`memwall config reference`, docs/config-reference.md) are driven by this one table, so the
/// accepted keys and their documentation cannot drift apart.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/core/units.h"
#include "sim/hw/config.h"

namespace memwall {

/// The kind of value a key holds, which decides how its YAML text is parsed.
enum class KeyType {
  kSize,  ///< parse_bytes: "50 MiB"
  kBandwidth,  ///< parse_bandwidth with sm.clock: "3.35 TB/s", "64 B/cycle"
  kFrequency,  ///< parse_frequency: "1.98 GHz"
  kDuration,  ///< parse_duration with sm.clock: "200 ns", "273 cycles"
  kInteger,  ///< a whole number without unit: "132"
  kReal,  ///< a real number without unit: "0.85"
  kString,  ///< free text
};

/// The range a numeric value must lie in (besides the per-key maximum).
enum class Bound {
  kNone,  ///< any value the parser accepts
  kPositive,  ///< > 0
  kNonNegative,  ///< >= 0
  kFraction,  ///< in (0, 1]
};

/// A parsed value of a key, in base units (Tick = ps, Bandwidth = B/s, Frequency = Hz).
using KeyValue =
    std::variant<std::string, Bytes, Bandwidth, Frequency, Tick, std::uint64_t, double>;

/// One declared key of the config.
struct KeyDecl {
  std::string_view path;  ///< dotted path in YAML, e.g. "l2.hit_latency"
  KeyType type;  ///< how the text is parsed
  std::string_view example;  ///< an accepted value, e.g. "50 MiB" (unit hint in the reference)
  std::string_view description;  ///< one line
  std::string_view default_text;  ///< the default as YAML text; empty when `required`
  bool required;  ///< a config (after `extends`) must set it
  std::string_view field;  ///< where it lands, e.g. "HardwareConfig::l2.hit_latency (Tick, ps)"
  Bound bound;  ///< range check applied after parsing
  double max;  ///< largest accepted value in base units (bytes, B/s, Hz, ps, count); 0 = none
  /// Stores a parsed value into the config; null for keys the loader handles itself (`extends`).
  void (*store)(HardwareConfig&, const KeyValue&);
  /// Reads the value back from a config (for `memwall config show`); null with `store`.
  KeyValue (*fetch)(const HardwareConfig&);
};

/// Every declared key, in the order they are parsed and documented (sm.clock comes before every
/// key that may be given per cycle).
std::span<const KeyDecl> config_schema();

/// The declaration of `path`, or nullptr when no such key exists.
const KeyDecl* find_key(std::string_view path);

/// The section names ("sm", "xbar", "l2", "hbm", "efficiency"), in schema order.
std::vector<std::string> config_sections();

/// The lowercase name of a type, as the reference shows it ("size", "bandwidth", ...).
std::string_view key_type_name(KeyType type);

/// Formats a value for people, with units; durations also in cycles of `clock` when it is > 0,
/// sizes also in bytes. Deterministic (fixed formats, no locale).
std::string format_key_value(const KeyDecl& key, const KeyValue& value, Frequency clock);

/// The closest declared key path to `unknown` by edit distance, or "" when none is close enough
/// to be a plausible misspelling.
std::string suggest_key(std::string_view unknown);

/// The full config reference in Markdown, generated from the table (docs/config-reference.md is
/// this text, committed; `memwall config reference` prints it).
std::string config_reference_markdown();

}  // namespace memwall
