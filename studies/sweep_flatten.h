#pragma once
/// Flattens a JSON report into named cells, so that every figure becomes one CSV column.
///
/// Object members become "parent.child"; an array of objects that each have a string "name"
/// member becomes "parent.<name>.child" (the "name" member itself is dropped), so per-kernel
/// figures read "kernels.flash2_fwd.time_s"; any other array element becomes "parent.<index>".
/// Numbers keep their JSON text exactly (so a deterministic report gives deterministic cells);
/// strings are unescaped; true/false/null stay as written. Order is the document's order.

#include <string>
#include <string_view>

#include "studies/sweep_plan.h"

namespace memwall {

/// Flattens `json` (an object), read with parse_json (sim/core/json.h). Throws UsageError naming
/// `what` and the byte offset on malformed JSON, a document that is not an object, or a repeated
/// flattened key.
FlatRow flatten_json(std::string_view json, const std::string& what);

}  // namespace memwall
