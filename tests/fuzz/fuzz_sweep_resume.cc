// libFuzzer harness of the sweep's resume sidecar reader (run_sweep with resume, through a fake
// point runner) and of the sweep's value-list and shard parsers (expand_values, parse_shard).
//
// Input layout: "VALUES\nSHARD\nSIDECAR...". VALUES and SHARD go to the parsers. SIDECAR is written
// after the valid first line of a sidecar of a fixed 6-point sweep (so the fuzzer is past the
// fingerprint check; with its first byte odd, every line also gets its right checksum) and the
// sweep is resumed from it; the fake runner gives every point the same
// figures. The only acceptable failure is a memwall::Error; anything else escapes and is a finding.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.h"
#include "studies/sweep_plan.h"
#include "studies/sweep_runner.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memwall;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto lines = fuzz::split_at(input, "\n");
  try {
    const std::vector<std::string> values = expand_values(lines[0], "--seq");
    // Each range holds at most 100000 values, but a list of several ranges may hold more.
    if (values.empty()) __builtin_trap();
  } catch (const Error&) {}
  if (lines.size() > 1) {
    try {
      const Shard shard = parse_shard(lines[1]);
      if (shard.count < 1 || shard.index >= shard.count) __builtin_trap();
    } catch (const Error&) {}
  }

  static const SweepPlan plan({{"seq", {"128", "256", "512"}}, {"dtype", {"fp16", "fp32"}}});
  SweepOptions options;
  options.output = fuzz::scratch_dir() + "/sweep.csv";
  options.resume = true;
  options.identity = "fuzz";
  const std::string print = fingerprint(options.identity + "\n" + plan.describe() + "\nshard=0/1");
  std::size_t skip = 0;
  for (std::size_t i = 0; i < 2 && i < lines.size(); ++i) skip += lines[i].size() + 1;
  std::string_view sidecar = skip < input.size() ? input.substr(skip) : std::string_view();
  // Rows carry a checksum: when the sidecar's first byte is odd, the harness appends the right one
  // to every complete line, so that mutations reach the checks behind it (index, parameters).
  std::string rows;
  if (!sidecar.empty() && (static_cast<unsigned char>(sidecar[0]) & 1) != 0) {
    sidecar.remove_prefix(1);
    for (const std::string_view line : fuzz::split_at(sidecar, "\n")) {
      rows += std::string(line) + "," + fingerprint(print + "\n" + std::string(line)) + "\n";
    }
  } else {
    rows = std::string(sidecar);
  }
  fuzz::write_scratch("sweep.csv.partial", "# memwall sweep partial v2 " + print + "\n" + rows);
  const PointRunner runner = [](const SweepPoint& point) {
    return FlatRow{{"time_s", point.at("seq")}, {"bytes", point.at("dtype")}};
  };
  try {
    (void)run_sweep(plan, runner, options);
  } catch (const Error&) {}
  std::remove(options.output.c_str());
  std::remove(partial_path(options.output).c_str());
  return 0;
}
