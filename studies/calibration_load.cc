#include "studies/calibration_load.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "models/model_source.h"
#include "sim/core/error.h"
#include "studies/parallel_for.h"
#include "traces/interruptible_source.h"

namespace memwall {
namespace {

/// Sector bytes of one box: every row spans the sectors from its first to its last byte.
std::uint64_t box_sector_bytes(const Box& box, std::uint64_t sector) {
  std::uint64_t total = 0;
  if (box.rows == 0 || box.row_bytes == 0) return 0;
  if (box.rows == 1 || box.pitch % sector == 0) {
    const std::uint64_t first = box.base / sector;
    const std::uint64_t last = (box.base + box.row_bytes - 1) / sector;
    return static_cast<std::uint64_t>(box.rows) * (last - first + 1) * sector;
  }
  for (std::uint32_t r = 0; r < box.rows; ++r) {
    const std::uint64_t start = box.base + r * box.pitch;
    total += ((start + box.row_bytes - 1) / sector - start / sector + 1) * sector;
  }
  return total;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.3f%%", fraction * 100.0);
  return buf;
}

}  // namespace

std::vector<KernelSectorBytes> count_sector_bytes(const WorkloadParams& params,
                                                  std::uint64_t sector_bytes) {
  if (sector_bytes == 0) throw UsageError("count_sector_bytes: sector_bytes must be > 0");
  std::unique_ptr<TraceSource> model = make_model_source(params);
  InterruptibleSource polled(*model);  // a large case takes seconds: Ctrl-C stops it per CTA
  TraceSource* source = &polled;
  std::vector<KernelSectorBytes> out;
  KernelInfo info;
  std::vector<Op> ops;
  while (source->next_kernel(info)) {
    KernelSectorBytes k;
    k.name = info.name;
    while (source->next_cta(ops)) {
      for (const Op& op : ops) {
        if (op.kind == OpKind::load) k.read_bytes += box_sector_bytes(op.box, sector_bytes);
        if (writes_global(op.kind)) k.write_bytes += box_sector_bytes(op.box, sector_bytes);
      }
    }
    out.push_back(std::move(k));
  }
  return out;
}

std::size_t LoadCheck::failures() const {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [](const LoadCheckRow& r) { return !r.pass; }));
}

LoadCheck run_load_check(const std::vector<MeasuredCase>& cases, double tolerance,
                         unsigned threads) {
  if (!(tolerance >= 0.0)) throw UsageError("load check: tolerance must be >= 0");
  // Count each case's model bytes (in parallel; slots keep the order).
  std::vector<std::vector<KernelSectorBytes>> counted(cases.size());
  parallel_for(cases.size(), threads, [&](std::size_t i) {
    bool any = false;
    for (const MeasuredKernel& k : cases[i].kernels) any = any || k.profiled();
    if (any) counted[i] = count_sector_bytes(cases[i].params);
  });

  LoadCheck check;
  check.tolerance = tolerance;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const MeasuredCase& mc = cases[i];
    for (const MeasuredKernel& k : mc.kernels) {
      if (!k.profiled()) {
        ++check.skipped;
        continue;
      }
      const KernelSectorBytes& model = model_kernel(counted[i], mc, k);
      LoadCheckRow r;
      r.case_index = i;
      r.kernel = k.name;
      r.line = k.line;
      r.model_read = static_cast<double>(model.read_bytes);
      r.model_write = static_cast<double>(model.write_bytes);
      r.xbar_read = *k.xbar_read_bytes;
      r.lts_read = *k.l2_read_bytes;
      r.lts_write = *k.l2_write_bytes;
      r.read_error =
          r.xbar_read > 0 ? r.model_read / r.xbar_read - 1.0 : (r.model_read > 0 ? 1.0 : 0.0);
      r.write_error =
          r.lts_write > 0 ? r.model_write / r.lts_write - 1.0 : (r.model_write > 0 ? 1.0 : 0.0);
      r.coalescing = r.model_read > 0 ? r.lts_read / r.model_read : 1.0;
      r.pass = std::abs(r.read_error) <= tolerance && std::abs(r.write_error) <= tolerance;
      check.rows.push_back(std::move(r));
    }
  }
  // Coalescing ratio per (workload, kernel); std::map keeps a fixed order.
  std::map<std::pair<std::string, std::string>, CoalescingSummary> groups;
  for (const LoadCheckRow& r : check.rows) {
    const std::string workload(to_string(cases[r.case_index].params.workload));
    CoalescingSummary& g = groups[{workload, r.kernel}];
    if (g.rows == 0 || r.coalescing < g.min_ratio) {
      g.min_ratio = r.coalescing;
      g.min_label = cases[r.case_index].label;
    }
    g.max_ratio = g.rows == 0 ? r.coalescing : std::max(g.max_ratio, r.coalescing);
    g.workload = workload;
    g.kernel = r.kernel;
    g.mean_ratio += r.coalescing;
    ++g.rows;
  }
  for (auto& [key, g] : groups) {
    g.mean_ratio /= static_cast<double>(g.rows);
    check.summary.push_back(g);
  }
  return check;
}

std::string load_check_to_text(const LoadCheck& check, const std::vector<MeasuredCase>& cases,
                               bool all_rows) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "Load for load: model SM->L2 bytes (from the ops, whole 32-byte sectors) against "
                "ncu, tolerance %.1f%%\n  reads vs xbar_read_bytes (SM side), writes vs "
                "l2_write_bytes (lts write sectors x 32)\n\n",
                check.tolerance * 100.0);
  out += buf;
  std::snprintf(buf, sizeof buf, "  %-44s %-10s %14s %14s %10s %14s %14s %10s %8s\n", "case",
                "kernel", "model read", "xbar read", "error", "model write", "lts write", "error",
                "lts/mod");
  bool header = false;
  for (const LoadCheckRow& r : check.rows) {
    if (!all_rows && r.pass) continue;
    if (!header) out += buf;
    header = true;
    char row[512];
    std::snprintf(row, sizeof row, "  %-44s %-10s %14.0f %14.0f %10s %14.0f %14.0f %10s %8.3f%s\n",
                  cases[r.case_index].label.c_str(), r.kernel.c_str(), r.model_read, r.xbar_read,
                  percent(r.read_error).c_str(), r.model_write, r.lts_write,
                  percent(r.write_error).c_str(), r.coalescing, r.pass ? "" : "  FAIL");
    out += row;
  }
  if (header) out += "\n";
  out +=
      "Coalescing: lts read sectors x 32 / model reads (1 = every requested sector reached the L2 "
      "slices)\n";
  std::snprintf(buf, sizeof buf, "  %-8s %-10s %5s %8s %8s %8s  %s\n", "workload", "kernel", "rows",
                "min", "mean", "max", "case at min");
  out += buf;
  for (const CoalescingSummary& g : check.summary) {
    std::snprintf(buf, sizeof buf, "  %-8s %-10s %5zu %8.3f %8.3f %8.3f  %s\n", g.workload.c_str(),
                  g.kernel.c_str(), g.rows, g.min_ratio, g.mean_ratio, g.max_ratio,
                  g.min_label.c_str());
    out += buf;
  }
  double worst_read = 0, worst_write = 0;
  for (const LoadCheckRow& r : check.rows) {
    worst_read = std::max(worst_read, std::abs(r.read_error));
    worst_write = std::max(worst_write, std::abs(r.write_error));
  }
  std::snprintf(buf, sizeof buf,
                "\n%zu kernel rows checked, %zu outside %.1f%% (worst read error %.3f%%, worst "
                "write error %.3f%%); %zu rows without ncu data skipped\n",
                check.rows.size(), check.failures(), check.tolerance * 100.0, worst_read * 100.0,
                worst_write * 100.0, check.skipped);
  out += buf;
  return out;
}

}  // namespace memwall
