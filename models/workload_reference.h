#pragma once
/// What `memwall workloads` prints, generated from the plugins' declarations: each workload's
/// summary and parameter table as text, and the parameter reference as Markdown
/// (docs/workloads.md, which a test keeps equal to workloads_markdown()).

#include <string>

#include "models/workload_plugin.h"

namespace memwall {

/// One workload as text: "name: summary", then a table of its parameters (parameter, flag,
/// type, unit, default, values, help). Deterministic, no trailing spaces.
std::string workload_text(const WorkloadPlugin& plugin);

/// Every workload as workload_text, in registration order, separated by blank lines.
std::string workloads_text();

/// The parameter reference in Markdown: the workloads with their summaries, then one parameter
/// table per workload.
std::string workloads_markdown();

}  // namespace memwall
