// libFuzzer harness of the trace reader (traces/trace_reader.h).
//
// The first input byte picks how the rest becomes a file:
//  - even: the rest is the file, byte for byte (prologue, chunk headers and CRCs as given);
//  - odd: the rest is a record stream; the harness writes a valid prologue and cuts the stream
//    into chunks of (byte >> 1) + 1 bytes with correct CRC-32s, so the fuzzer reaches the record
//    decoder instead of stopping at the checksum.
// Every kernel and every CTA is pulled. The only acceptable failure is a memwall::Error
// (TraceError); anything else escapes and is a finding.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/error.h"
#include "tests/fuzz/fuzz_util.h"
#include "traces/op.h"
#include "traces/trace_format.h"
#include "traces/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memwall;
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string path = fuzz::write_scratch(
      "trace.mwt", (data[0] & 1) ? std::string_view(frame_trace(rest, (data[0] >> 1) + 1u)) : rest);
  try {
    TraceReader reader(path);
    KernelInfo kernel;
    std::vector<Op> ops;
    while (reader.next_kernel(kernel)) {
      while (reader.next_cta(ops)) {}
    }
  } catch (const Error&) {}
  return 0;
}
