#pragma once
/// The one strict reader of measured CSVs (traces/measured/*.csv: the CUDA kernels' times and
/// Nsight Compute counters), used by `calibrate` and by `io --measured`. Where the sweep CSV
/// reader (studies/sweep_csv.h) reads what memwall itself wrote, this one reads files that people
/// and scripts write, so it accepts only what the format says:
///   - lines end in "\n" or "\r\n"; a lone "\r", a NUL or another control character is an error;
///   - header names are exact: no padding, no upper case, none empty or repeated (a near miss of
///     a lowercase name is reported with the name meant); unknown names are extra columns;
///   - counts (bytes, sectors) are exact decimal integers below 2^64: no sign, point, exponent,
///     hexadecimal or "inf";
///   - times are finite non-negative decimal reals ("1.5e-06" is fine; "inf", "nan", "0x1p3" not).
/// Each problem is one UsageError naming the file, the line, the column and the reason.

#include <cstdint>
#include <optional>
#include <string>

#include "studies/sweep_csv.h"

namespace memwall {

/// Reads `path` as a measured CSV (checks above on every line and on the header).
CsvTable read_measured_csv(const std::string& path);

/// The index of column `name`; throws UsageError "PATH:1: missing column \"NAME\"" when absent.
std::size_t measured_column(const CsvTable& table, const std::string& name);

/// A byte-count cell: an exact decimal integer in [0, 2^64). `where` names the place
/// ("m.csv:3: column dram_read_bytes") for the UsageError otherwise.
std::uint64_t parse_measured_count(const std::string& cell, const std::string& where);
/// The same, where an empty cell means "not measured".
std::optional<std::uint64_t> parse_optional_count(const std::string& cell,
                                                  const std::string& where);

/// A time cell in seconds: a finite, non-negative decimal real.
double parse_measured_seconds(const std::string& cell, const std::string& where);
/// The same, where an empty cell means "not measured".
std::optional<double> parse_optional_seconds(const std::string& cell, const std::string& where);

}  // namespace memwall
