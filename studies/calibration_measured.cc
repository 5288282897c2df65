#include "studies/calibration_measured.h"

#include <map>
#include <string_view>

#include "sim/core/error.h"
#include "studies/measured_csv.h"
#include "studies/measured_join.h"
#include "studies/sweep_csv.h"

namespace memwall {
namespace {

/// The parameter columns every measured CSV has: a measurement always has a shape.
constexpr const char* kShapeColumns[] = {"batch", "heads", "seq", "head_dim"};

/// A byte count of the measured CSV, strictly (studies/measured_csv.h), as the figures hold it.
std::optional<double> optional_count(const std::string& text, const std::string& where) {
  const std::optional<std::uint64_t> v = parse_optional_count(text, where);
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

}  // namespace

bool MeasuredCase::profiled() const {
  for (const MeasuredKernel& k : kernels) {
    if (!k.profiled()) return false;
  }
  return !kernels.empty();
}

std::string case_label(const WorkloadParams& p) {
  std::string s = std::string(to_string(p.workload)) + " B=" + std::to_string(p.batch) +
                  " H=" + std::to_string(p.heads) + " N=" + std::to_string(p.seq) +
                  " d=" + std::to_string(p.head_dim);
  if (p.kv_heads && *p.kv_heads != p.heads) s += " Hkv=" + std::to_string(*p.kv_heads);
  if (p.seq_kv && *p.seq_kv != p.seq) s += " Nkv=" + std::to_string(*p.seq_kv);
  if (p.causal) s += " causal";
  if (p.dtype != Dtype::fp16) s += " " + std::string(to_string(p.dtype));
  if (p.block_q) s += " Br=" + std::to_string(*p.block_q);
  if (p.block_kv) s += " Bc=" + std::to_string(*p.block_kv);
  if (p.block_k) s += " Bk=" + std::to_string(*p.block_k);
  if (p.stages) s += " st=" + std::to_string(*p.stages);
  if (p.softmax_rows) s += " rows=" + std::to_string(*p.softmax_rows);
  if (p.splits && *p.splits != 1) s += " S=" + std::to_string(*p.splits);
  return s;
}

std::vector<MeasuredCase> read_measured_cases(const std::string& path) {
  const CsvTable table = read_measured_csv(path);
  auto need = [&](const char* name) {
    const int c = table.column(name);
    if (c < 0) throw UsageError(path + ":1: missing column \"" + std::string(name) + "\"");
    return static_cast<std::size_t>(c);
  };
  for (const char* name : kShapeColumns) need(name);
  std::vector<int> param_cols;  // -1: not in the file, the parameter's default
  for (const char* name : kMeasuredParamColumns) param_cols.push_back(table.column(name));
  const std::size_t c_kernel = need("kernel");
  const std::size_t c_time = need("time_s");
  const std::size_t c_ncu = need("ncu_time_s");
  const std::size_t c_dr = need("dram_read_bytes");
  const std::size_t c_dw = need("dram_write_bytes");
  const std::size_t c_lr = need("l2_read_bytes");
  const std::size_t c_lw = need("l2_write_bytes");
  const std::size_t c_xr = need("xbar_read_bytes");
  const std::size_t c_xw = need("xbar_write_bytes");

  std::vector<MeasuredCase> cases;
  std::map<std::vector<std::string>, std::size_t> index;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    const int line = table.row_lines[r];
    const std::string where = path + ":" + std::to_string(line);
    auto cell_where = [&](std::size_t c) { return where + ": column " + table.header[c]; };
    if (row[c_kernel] == "total") continue;
    FlatRow named;
    std::vector<std::string> key;
    for (std::size_t i = 0; i < param_cols.size(); ++i) {
      key.push_back(param_cols[i] < 0 ? "" : row[static_cast<std::size_t>(param_cols[i])]);
      if (!key.back().empty()) named.emplace_back(kMeasuredParamColumns[i], key.back());
    }
    for (auto& cell : measured_variant_cells(table, r, where)) named.push_back(std::move(cell));
    for (std::string& v : variant_join_values(named)) key.push_back(std::move(v));
    auto it = index.find(key);
    if (it == index.end()) {
      MeasuredCase mc;
      try {
        mc.params = resolve_workload(params_from_named(named));
      } catch (const UsageError& e) {
        throw UsageError(where + ": " + e.what());
      }
      mc.label = case_label(mc.params);
      mc.line = line;
      it = index.emplace(key, cases.size()).first;
      cases.push_back(std::move(mc));
    }
    MeasuredKernel k;
    k.name = row[c_kernel];
    if (k.name.empty()) throw UsageError(cell_where(c_kernel) + ": empty kernel name");
    k.line = line;
    k.time_s = parse_measured_seconds(row[c_time], cell_where(c_time));
    k.ncu_time_s = parse_optional_seconds(row[c_ncu], cell_where(c_ncu));
    k.dram_read_bytes = optional_count(row[c_dr], cell_where(c_dr));
    k.dram_write_bytes = optional_count(row[c_dw], cell_where(c_dw));
    k.l2_read_bytes = optional_count(row[c_lr], cell_where(c_lr));
    k.l2_write_bytes = optional_count(row[c_lw], cell_where(c_lw));
    k.xbar_read_bytes = optional_count(row[c_xr], cell_where(c_xr));
    k.xbar_write_bytes = optional_count(row[c_xw], cell_where(c_xw));
    MeasuredCase& mc = cases[it->second];
    for (const MeasuredKernel& other : mc.kernels) {
      if (other.name == k.name) {
        throw UsageError(where + ": kernel " + k.name + " of " + mc.label + " already on line " +
                         std::to_string(other.line));
      }
    }
    mc.kernels.push_back(std::move(k));
  }
  if (cases.empty()) throw UsageError(path + ": no kernel rows");
  return cases;
}

}  // namespace memwall
