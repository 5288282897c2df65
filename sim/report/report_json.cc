#include "sim/report/report_json.h"

#include <cstdio>
#include <string_view>

#include "sim/core/json.h"
#include "sim/core/json_writer.h"
#include "sim/core/version.h"
#include "sim/hw/config_schema.h"

namespace memwall {
namespace {

/// The figures every level (run and kernel) has.
void write_figures(DocumentWriter& w, const TrafficCounters& c, const StallTime& stall,
                   std::uint32_t sm_count, Tick span) {
  for (const FigureStat& f : figure_stats()) {
    if (f.whole()) {
      w.integer(f.name, f.count(c));
    } else {
      w.number(f.name, f.derived(c, span));
    }
  }
  const StallTime f = stall_fractions(stall, sm_count, span);
  w.open("stall", '{');
  w.number("compute", f.compute);
  w.number("memory_latency", f.memory_latency);
  w.number("memory_bandwidth", f.memory_bandwidth);
  w.number("idle", f.idle);
  w.close();
}

/// Per resource class: requests, summed and mean queueing, the busiest instance and its use.
void write_resources(DocumentWriter& w, const ResourceUses& uses, Tick span) {
  w.open("resources", '{');
  for (std::size_t i = 0; i < kResourceClassCount; ++i) {
    const auto c = static_cast<ResourceClass>(i);
    const ResourceUse& u = uses[i];
    w.open(resource_class_name(c), '{');
    for (const ResourceStat& stat : resource_stats()) {
      switch (stat.kind) {
        case ResourceStat::Kind::kCount: w.integer(stat.name, stat.count(u)); break;
        case ResourceStat::Kind::kInstance:
          w.string(stat.name, resource_instance_name(c, u.busiest));
          break;
        default: w.number(stat.name, stat.value(u, span));
      }
    }
    w.close();
  }
  w.close();
}

/// One key's value in the report's base units: durations in seconds, the rest as parsed.
void write_key_value(DocumentWriter& w, std::string_view key, const KeyValue& v) {
  if (const auto* b = std::get_if<Bytes>(&v)) return w.integer(key, b->count);
  if (const auto* bw = std::get_if<Bandwidth>(&v)) return w.number(key, bw->bytes_per_second);
  if (const auto* f = std::get_if<Frequency>(&v)) return w.number(key, f->hertz);
  if (const auto* t = std::get_if<Tick>(&v)) return w.number(key, seconds(*t));
  if (const auto* n = std::get_if<std::uint64_t>(&v)) return w.integer(key, *n);
  if (const auto* d = std::get_if<double>(&v)) return w.number(key, *d);
  w.string(key, std::get<std::string>(v));
}

}  // namespace

void write_run_document(DocumentWriter& w, const RunResult& r, const RunProvenance* p) {
  w.open("", '{');
  if (p != nullptr) {
    w.open("memwall", '{');
    w.string("version", memwall_version());
    w.string("git_describe", memwall_git_describe());
    w.close();
  }
  w.open("workload", '{');
  w.string("name", r.workload.name);
  w.open("params", '{');
  for (const auto& [key, value] : r.workload.params) w.param(key, value);
  w.close();
  w.close();
  w.open("config", '{');
  w.string("name", r.config_name);
  if (p != nullptr) {
    w.string("description", p->hw.description);
    w.string("path", p->config);
    w.string("file", p->config_file);
    w.open("overrides", '[');
    for (const std::string& o : p->overrides) w.string("", o);
    w.close();
    w.open("values", '{');
    for (const KeyDecl& key : config_schema()) {
      if (key.fetch != nullptr) write_key_value(w, key.path, key.fetch(p->hw));
    }
    w.close();
  }
  w.close();
  w.boolean("flush_l2_between_kernels", r.flush_l2_between_kernels);
  write_figures(w, r.traffic, r.stall, r.sm_count, r.time);
  w.integer("dram_dirty_bytes_at_end", r.dram_dirty_bytes_at_end);
  w.integer("dram_flush_writeback_bytes", r.dram_flush_writeback_bytes);
  w.open("dram_bytes_by_tensor", '{');
  for (const TensorDramBytes& t : r.dram_bytes_by_tensor) {
    w.open(t.name, '{');
    for (const TensorStat& stat : tensor_stats()) w.integer(stat.name, stat.bytes(t));
    w.close();
  }
  w.close();
  w.open("dram_bytes_by_reason", '{');
  w.integer("compulsory", r.dram_bytes_by_reason.compulsory);
  w.integer("reread", r.dram_bytes_by_reason.reread);
  w.integer("writeback", r.dram_bytes_by_reason.writeback);
  w.close();
  w.open("kernels", '[');
  for (const KernelResult& k : r.kernels) {
    w.open("", '{');
    w.string("name", k.name);
    w.integer("grid_ctas", k.info.ctas);
    w.integer("threads_per_cta", k.info.threads_per_cta);
    w.integer("smem_bytes_per_cta", k.info.smem_bytes_per_cta);
    w.integer("ctas_per_sm", k.ctas_per_sm);
    w.string("occupancy_limit", k.occupancy_limit);
    w.number("start_s", seconds(k.start));
    write_figures(w, k.traffic, k.stall, r.sm_count, k.duration());
    write_resources(w, k.resources, k.duration());
    w.close();
  }
  w.close();
  w.close();
}

StallTime stall_fractions(const StallTime& stall, std::uint32_t sm_count, Tick span) {
  StallTime f;
  const double total = static_cast<double>(sm_count) * static_cast<double>(span);
  if (total <= 0.0) return f;
  f.compute = stall.compute / total;
  f.memory_latency = stall.memory_latency / total;
  f.memory_bandwidth = stall.memory_bandwidth / total;
  f.idle = stall.idle / total;
  return f;
}

std::string run_to_json(const RunResult& result) {
  JsonWriter w;
  write_run_document(w, result);
  return w.take();
}

std::string runs_to_json(const std::vector<RunResult>& results) {
  JsonWriter w;
  w.open("", '[');
  for (const RunResult& r : results) write_run_document(w, r);
  w.close();
  return w.take();
}

std::string run_to_json(const RunResult& result, const RunProvenance& provenance) {
  JsonWriter w;
  write_run_document(w, result, &provenance);
  return w.take();
}

std::string runs_to_json(const std::vector<RunResult>& results, const RunProvenance& provenance) {
  JsonWriter w;
  w.open("", '[');
  for (const RunResult& r : results) write_run_document(w, r, &provenance);
  w.close();
  return w.take();
}

}  // namespace memwall
