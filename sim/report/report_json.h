#pragma once
/// The machine-readable report of a run (`--json FILE`): stable keys, base units only (bytes,
/// seconds, bytes/s, FLOPs), integers as integers and doubles as "%.9g", so the same run gives
/// byte-identical text. Keys are listed in docs/simulator.md.

#include <string>
#include <vector>

#include "sim/core/json_writer.h"
#include "sim/engine/run_result.h"
#include "sim/report/provenance.h"

namespace memwall {

/// The JSON object of one run (ends with a newline).
std::string run_to_json(const RunResult& result);

/// Writes the run report's members to `w` (the one list of them: the JSON reports and a sweep's
/// flat columns both come from it); with `provenance`, the build, config file and values too.
void write_run_document(DocumentWriter& w, const RunResult& result,
                        const RunProvenance* provenance = nullptr);

/// A JSON array of several runs' objects (ends with a newline).
std::string runs_to_json(const std::vector<RunResult>& results);

/// The same with the provenance (`memwall run --json`, `replay --json`): each run's object starts
/// with "memwall": {"version", "git_describe"}, and its "config" holds, after "name", the
/// "description", the "path" as given, the "file" it resolved to, the "overrides" (a list of the
/// --set texts) and "values": every key of the resolved config in base units (bytes, B/s, Hz,
/// seconds, counts; strings as strings), in the config reference's order.
std::string run_to_json(const RunResult& result, const RunProvenance& provenance);
std::string runs_to_json(const std::vector<RunResult>& results, const RunProvenance& provenance);

/// Stall fractions of `stall` over `sm_count` SMs × `span`: {compute, memory_latency,
/// memory_bandwidth, idle}, summing to 1 (all 0 when span is 0).
StallTime stall_fractions(const StallTime& stall, std::uint32_t sm_count, Tick span);

}  // namespace memwall
