// libFuzzer harness of the CSV readers: read_csv (sweep shards), read_measured_csv and its cell
// parsers (the measured-data files of `calibrate` and `io --measured`), csv_split and
// merge_shards (`memwall sweep merge`). The numeric cells
// of a measured row are read in io_check.cc, which needs the models library; that path is covered
// end to end by tests/reliability instead.
//
// Input layout: up to four files separated by "\n%%file\n"; each is read with read_csv and every
// row written back and split again, then all of them are merged as shards. The only
// acceptable failure is a memwall::Error; anything else escapes and is a finding.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.h"
#include "studies/measured_csv.h"
#include "studies/sweep_csv.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memwall;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto parts = fuzz::split_at(input, "\n%%file\n");
  if (parts.size() > 4) parts.resize(4);
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    paths.push_back(fuzz::write_scratch("shard" + std::to_string(i) + ".csv", parts[i]));
  }
  try {
    const CsvTable table = read_csv(paths[0]);
    for (const auto& row : table.rows) {
      // A row written back and split again gives the same cells.
      const std::string line = csv_line(row);
      if (csv_split(std::string_view(line).substr(0, line.size() - 1), "roundtrip") != row) {
        __builtin_trap();
      }
    }
  } catch (const Error&) {}
  try {
    // The strict reader of measured CSVs, and its cell parsers on every cell it accepts.
    const CsvTable table = read_measured_csv(paths[0]);
    for (const auto& row : table.rows) {
      for (const std::string& cell : row) {
        try {
          const std::uint64_t v = parse_measured_count(cell, "count");
          if (std::to_string(v) != cell.substr(cell.find_first_not_of('0') == std::string::npos
                                                   ? cell.size() - 1
                                                   : cell.find_first_not_of('0'))) {
            __builtin_trap();  // a count is its decimal digits, nothing else
          }
        } catch (const Error&) {}
        try {
          const double t = parse_measured_seconds(cell, "time");
          if (!(t >= 0) || !std::isfinite(t)) __builtin_trap();
        } catch (const Error&) {}
      }
    }
  } catch (const Error&) {}
  try {
    (void)merge_shards(paths);
  } catch (const Error&) {}
  return 0;
}
