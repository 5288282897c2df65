#include "studies/validate.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <regex>
#include <tuple>
#include <utility>

#include "sim/core/error.h"
#include "sim/core/json.h"
#include "sim/core/json_writer.h"
#include "sim/core/units.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "studies/calibration_measured.h"
#include "studies/parallel_for.h"
#include "studies/sweep_csv.h"
#include "studies/workload_config.h"

namespace memwall {
namespace {

/// The workload parameter columns of the harness's CSV (docs/cuda.md); the variant columns are
/// read when the file has them.
constexpr const char* kRequiredParams[] = {"workload", "batch",  "heads",       "seq",
                                           "head_dim", "dtype",  "block_q",     "block_kv",
                                           "block_k",  "stages", "softmax_rows"};
constexpr const char* kOptionalParams[] = {"kv_heads", "seq_kv", "causal", "splits"};

std::string printf_text(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string percent(double v) { return printf_text("%+.1f%%", 100 * v); }
/// A CSV figure: the shortest text that reads back as the same double, so that a table summarized
/// again from the CSV (`validate --table`) prints what the run printed (9 digits once left a
/// simulated 23.37765012 ms as 23.37765, which rounds the other way at four decimals).
std::string json_num(double v) { return format_shortest(v); }

/// A CSV table with errors that name the file, the line and the column.
class CsvCells {
 public:
  explicit CsvCells(const std::string& path) : m_table(read_csv(path)) {}

  const CsvTable& table() const { return m_table; }

  /// The index of column `name`; UsageError when required and missing, -1 when optional.
  int column(const char* name, bool required = true) const {
    const int c = m_table.column(name);
    if (c < 0 && required) {
      throw UsageError(m_table.path + ":1: missing column \"" + std::string(name) + "\"");
    }
    return c;
  }

  /// "FILE:LINE: column N (NAME)" of a cell.
  std::string where(std::size_t row, int col) const {
    return m_table.path + ":" + std::to_string(m_table.row_lines[row]) + ": column " +
           std::to_string(col + 1) + " (" + m_table.header[static_cast<std::size_t>(col)] + ")";
  }

  const std::string& text(std::size_t row, int col) const {
    return m_table.rows[row][static_cast<std::size_t>(col)];
  }

  /// A finite non-negative number; empty is nullopt; anything else a UsageError at the cell.
  std::optional<double> number(std::size_t row, int col) const {
    if (col < 0) return std::nullopt;
    const std::string& t = text(row, col);
    if (t.empty()) return std::nullopt;
    double v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v) || v < 0) {
      throw UsageError(where(row, col) + ": not a non-negative number: \"" + t + "\"");
    }
    return v;
  }

  double required_number(std::size_t row, int col) const {
    const std::optional<double> v = number(row, col);
    if (!v) throw UsageError(where(row, col) + ": empty, a number is required");
    return *v;
  }

 private:
  CsvTable m_table;
};

/// One kernel row (or the total row) of a case at one setting.
struct MeasuredFigure {
  int line = 0;
  double time_s = 0;
  std::optional<double> dram_bytes;
};

/// A case of the measurement file: its parameters and, per setting, its kernels and total.
struct ChangeCase {
  WorkloadParams params;
  std::string label;
  std::vector<std::string> kernel_names;  ///< in file order
  /// Per setting index: kernel name ("total" included when the file has it) → figure.
  std::vector<std::map<std::string, MeasuredFigure>> at;
};

/// A setting as read, before it is ordered and named.
struct RawSetting {
  std::string key;  ///< the cells that tell it apart
  std::string label;
  double value = 0;  ///< SMs held, or bytes granted
  bool reference = false;
  std::string reserve;  ///< l2-size: the reserve cell as asked ("25%"), empty otherwise
};

/// What one simulation gave: its total and its kernels' times and DRAM bytes.
struct SimFigures {
  double time_s = 0;
  std::map<std::string, double> kernel_time_s;
  std::map<std::string, double> kernel_dram_bytes;
};

struct ReadFile {
  std::vector<ChangeCase> cases;
  std::vector<RawSetting> settings;  ///< ordered: the reference, then the change growing
  bool has_dram = false;
};

/// The setting of row `r`: sm-count from `sms_requested` (empty: no green context, the
/// reference) and `sms`; l2-size from `reserve` and `granted_bytes` (empty: no carve-out).
RawSetting setting_of(const CsvCells& csv, std::size_t r, ChipChange change) {
  RawSetting s;
  if (change == ChipChange::kSmCount) {
    const int c_sms = csv.column("sms");
    const int c_req = csv.column("sms_requested", false);
    s.value = csv.required_number(r, c_sms);
    if (s.value < 1 || s.value != std::floor(s.value)) {
      throw UsageError(csv.where(r, c_sms) + ": not a whole SM count: \"" + csv.text(r, c_sms) +
                       "\"");
    }
    const std::string requested = c_req < 0 ? "" : csv.text(r, c_req);
    s.reference = c_req >= 0 && requested.empty();
    s.key = requested + "/" + csv.text(r, c_sms);
    s.label = s.reference ? "none" : "green " + printf_text("%.0f", s.value);
  } else {
    const int c_reserve = csv.column("reserve");
    const int c_granted = csv.column("granted_bytes");
    const std::optional<double> granted = csv.number(r, c_granted);
    s.value = granted.value_or(0);
    s.reference = !granted;
    s.key = csv.text(r, c_reserve) + "/" + csv.text(r, c_granted);
    const std::string& reserve = csv.text(r, c_reserve);
    s.reserve = reserve;
    s.label = s.reference
                  ? "none"
                  : "reserve " + (reserve.empty() ? printf_text("%.0fB", s.value) : reserve);
  }
  return s;
}

ReadFile read_change_file(const std::string& path, ChipChange change) {
  const CsvCells csv(path);
  std::vector<std::pair<const char*, int>> params;
  for (const char* name : kRequiredParams) params.emplace_back(name, csv.column(name));
  for (const char* name : kOptionalParams) {
    const int c = csv.column(name, false);
    if (c >= 0) params.emplace_back(name, c);
  }
  const int c_kernel = csv.column("kernel");
  const int c_time = csv.column("time_s");
  const int c_read = csv.column("dram_read_bytes", false);
  const int c_write = csv.column("dram_write_bytes", false);

  ReadFile f;
  std::map<std::string, std::size_t> setting_index;
  std::map<std::vector<std::string>, std::size_t> case_index;
  std::vector<std::pair<std::size_t, std::size_t>> row_place;  // (case, raw setting) per row
  const CsvTable& table = csv.table();
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const RawSetting s = setting_of(csv, r, change);
    auto sit = setting_index.find(s.key);
    if (sit == setting_index.end()) {
      sit = setting_index.emplace(s.key, f.settings.size()).first;
      f.settings.push_back(s);
    }
    std::vector<std::string> key;
    std::vector<std::pair<std::string, std::string>> named;
    for (const auto& [name, c] : params) {
      key.push_back(csv.text(r, c));
      if (!key.back().empty()) named.emplace_back(name, key.back());
    }
    auto cit = case_index.find(key);
    if (cit == case_index.end()) {
      ChangeCase cc;
      try {
        cc.params = resolve_workload(params_from_named(named));
      } catch (const UsageError& e) {
        throw UsageError(path + ":" + std::to_string(table.row_lines[r]) + ": " + e.what());
      }
      cc.label = case_label(cc.params);
      cit = case_index.emplace(key, f.cases.size()).first;
      f.cases.push_back(std::move(cc));
    }
    ChangeCase& cc = f.cases[cit->second];
    const std::string& kernel = csv.text(r, c_kernel);
    if (kernel.empty()) throw UsageError(csv.where(r, c_kernel) + ": empty kernel name");
    if (kernel != "total" && std::find(cc.kernel_names.begin(), cc.kernel_names.end(), kernel) ==
                                 cc.kernel_names.end()) {
      cc.kernel_names.push_back(kernel);
    }
    MeasuredFigure m;
    m.line = table.row_lines[r];
    m.time_s = csv.required_number(r, c_time);
    if (m.time_s <= 0) throw UsageError(csv.where(r, c_time) + ": a time must be positive");
    const std::optional<double> read = csv.number(r, c_read);
    const std::optional<double> write = csv.number(r, c_write);
    if (read && write) {
      m.dram_bytes = *read + *write;
      f.has_dram = true;
    }
    cc.at.resize(std::max(cc.at.size(), f.settings.size()));
    auto& slot = cc.at[sit->second];
    if (const auto prev = slot.find(kernel); prev != slot.end()) {
      throw UsageError(path + ":" + std::to_string(m.line) + ": kernel " + kernel + " of " +
                       cc.label + " at " + s.label + " already on line " +
                       std::to_string(prev->second.line));
    }
    slot.emplace(kernel, m);
  }
  if (f.cases.empty()) throw UsageError(path + ": no rows");

  // Order the settings: the reference, then the change growing (fewer SMs, more set aside).
  std::vector<std::size_t> order(f.settings.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const RawSetting& x = f.settings[a];
    const RawSetting& y = f.settings[b];
    if (x.reference != y.reference) return x.reference;
    return change == ChipChange::kSmCount ? x.value > y.value : x.value < y.value;
  });
  if (!f.settings[order[0]].reference) {
    throw UsageError(path + ": no reference rows (" +
                     std::string(change == ChipChange::kSmCount
                                     ? "sms_requested empty: no green context"
                                     : "granted_bytes empty: no carve-out") +
                     ")");
  }
  std::vector<RawSetting> sorted;
  for (const std::size_t i : order) sorted.push_back(f.settings[i]);
  for (ChangeCase& cc : f.cases) {
    cc.at.resize(f.settings.size());
    std::vector<std::map<std::string, MeasuredFigure>> at;
    for (const std::size_t i : order) at.push_back(std::move(cc.at[i]));
    cc.at = std::move(at);
  }
  f.settings = std::move(sorted);
  return f;
}

/// What a persisting-L2 carve-out does to HBM streams, measured by
/// models/cuda/ubench/l2_carveout.cu: per reserve as asked ("25%"), the read-only and write-only
/// streams' rates with that carve-out (its lines persisting) over the rates without one, at most
/// 1: the model represents a carve-out that slows a stream or leaves it alone, not one that speeds
/// it (the H100's reads at 25–75% of the maximum came out 1.016–1.020 in both passes, its write at
/// 25% 1.003 and 1.015; efficiency.hbm must also stay within (0, 1]).
struct CarveoutRates {
  std::string path;
  std::map<std::string, std::pair<double, double>> read_write;  ///< reserve -> (read, write)
};

CarveoutRates read_carveout_rates(const std::string& path) {
  const CsvCells csv(path);
  const int c_cond = csv.column("condition");
  const int c_test = csv.column("test");
  const int c_gbps = csv.column("gbps");
  std::map<std::string, std::map<std::string, double>> gbps;  // condition -> test -> GB/s
  for (std::size_t r = 0; r < csv.table().rows.size(); ++r) {
    const std::string& test = csv.text(r, c_test);
    if (test != "hbm_read" && test != "hbm_write") continue;
    const double v = csv.required_number(r, c_gbps);
    if (v <= 0) throw UsageError(csv.where(r, c_gbps) + ": a stream's rate must be positive");
    gbps[csv.text(r, c_cond)][test] = v;
  }
  auto rates_of = [&](const std::string& condition) -> std::pair<double, double> {
    const auto it = gbps.find(condition);
    if (it == gbps.end() || !it->second.count("hbm_read") || !it->second.count("hbm_write")) {
      throw UsageError(path + ": no hbm_read and hbm_write rows for condition \"" + condition +
                       "\" (l2_carveout.cu's output has them)");
    }
    return {it->second.at("hbm_read"), it->second.at("hbm_write")};
  };
  const auto [none_read, none_write] = rates_of("none");
  CarveoutRates out;
  out.path = path;
  const std::string prefix = "persisting ";
  for (const auto& [condition, tests] : gbps) {
    if (condition.rfind(prefix, 0) != 0) continue;
    const auto [read, write] = rates_of(condition);
    out.read_write[condition.substr(prefix.size())] = {std::min(1.0, read / none_read),
                                                       std::min(1.0, write / none_write)};
  }
  if (out.read_write.empty()) {
    throw UsageError(path + ": no \"persisting R\" rows (the HBM streams with a carve-out)");
  }
  return out;
}

/// The override of a setting on `config`: sm-count, `sm.count`; l2-size, `l2.size` less the
/// bytes granted and, with `rates`, the HBM's read and write rates scaled by what the same
/// carve-out does to the measured streams (overrides separated by spaces).
std::string override_of(const RawSetting& s, ChipChange change, const HardwareConfig& config,
                        const std::string& path, const CarveoutRates* rates) {
  if (change == ChipChange::kSmCount) return "sm.count=" + printf_text("%.0f", s.value);
  const double left = static_cast<double>(config.l2.size.count) - s.value;
  if (left <= 0) {
    throw UsageError(path + ": " + s.label + " sets aside " + printf_text("%.0f", s.value) +
                     " bytes, not less than the config's l2.size of " +
                     format_bytes(config.l2.size));
  }
  std::string text = "l2.size=" + printf_text("%.0f", left) + "B";
  if (rates == nullptr || s.reference || s.value <= 0) return text;
  const auto it = rates->read_write.find(s.reserve);
  if (it == rates->read_write.end()) {
    throw UsageError(path + ": " + s.label + ": " + rates->path + " has no \"persisting " +
                     s.reserve + "\" rows");
  }
  const auto [read, write] = it->second;
  return text + " hbm.write_rate=" + printf_text("%.4f", config.hbm.write_rate * write) +
         " hbm.mixed_write_rate=" + printf_text("%.4f", config.hbm.mixed_write_rate * write) +
         " efficiency.hbm=" + printf_text("%.4f", config.efficiency.hbm * read);
}

SimFigures simulate_case(const std::string& config, const std::string& override_text,
                         const WorkloadParams& params, bool flush) {
  const HardwareConfig hw = load_config(config, setting_overrides(override_text));
  SimOptions sim;
  sim.flush_l2_between_kernels = flush;
  const RunResult run = simulate_workload(hw, params, sim);
  SimFigures f;
  f.time_s = static_cast<double>(run.time) / static_cast<double>(kTicksPerSecond);
  for (const KernelResult& k : run.kernels) {
    f.kernel_time_s[k.name] =
        static_cast<double>(k.duration()) / static_cast<double>(kTicksPerSecond);
    f.kernel_dram_bytes[k.name] =
        static_cast<double>(k.traffic.dram_read_bytes + k.traffic.dram_write_bytes);
  }
  return f;
}

double gmean(const std::vector<double>& v) {
  double s = 0;
  for (const double x : v) s += std::log(x);
  return v.empty() ? 1.0 : std::exp(s / static_cast<double>(v.size()));
}

/// Mean |e| and the e of largest magnitude.
std::pair<double, double> mape_worst(const std::vector<double>& errors) {
  double sum = 0;
  double worst = 0;
  for (const double e : errors) {
    sum += std::fabs(e);
    if (std::fabs(e) > std::fabs(worst)) worst = e;
  }
  return {errors.empty() ? 0.0 : sum / static_cast<double>(errors.size()), worst};
}

/// Fills the slowdowns and DRAM growths of `rows` against their reference row.
void fill_ratios(std::vector<ValidationRow>& rows) {
  std::map<std::pair<std::string, std::string>, const ValidationRow*> refs;
  for (const ValidationRow& r : rows) {
    if (r.reference) refs[{r.case_label, r.kernel}] = &r;
  }
  for (ValidationRow& r : rows) {
    const auto it = refs.find({r.case_label, r.kernel});
    if (it == refs.end()) continue;
    const ValidationRow& ref = *it->second;
    r.meas_slowdown = r.meas_time_s / ref.meas_time_s;
    r.sim_slowdown = r.sim_time_s / ref.sim_time_s;
    if (r.meas_dram_bytes && r.sim_dram_bytes && ref.meas_dram_bytes && ref.sim_dram_bytes &&
        *ref.meas_dram_bytes > 0 && *ref.sim_dram_bytes > 0) {
      r.meas_dram_growth = *r.meas_dram_bytes / *ref.meas_dram_bytes;
      r.sim_dram_growth = *r.sim_dram_bytes / *ref.sim_dram_bytes;
    }
  }
}

}  // namespace

std::vector<std::string> setting_overrides(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = std::min(text.find(' ', pos), text.size());
    if (end > pos) out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

const char* chip_change_name(ChipChange change) {
  return change == ChipChange::kSmCount ? "sm-count" : "l2-size";
}

ValidationTable run_validation(ChipChange change, const std::string& measured_path,
                               const ValidateOptions& options) {
  ReadFile file = read_change_file(measured_path, change);
  if (!options.only_regex.empty()) {
    std::regex re;
    try {
      re = std::regex(options.only_regex);
    } catch (const std::regex_error& e) {
      throw UsageError("--only: not a regular expression: \"" + options.only_regex +
                       "\": " + e.what());
    }
    std::erase_if(file.cases, [&](const ChangeCase& c) { return !std::regex_search(c.label, re); });
  }
  if (options.max_cases > 0 && file.cases.size() > options.max_cases)
    file.cases.resize(options.max_cases);
  if (file.cases.empty()) {
    throw UsageError(measured_path + ": no case matches --only \"" + options.only_regex + "\"");
  }

  const HardwareConfig base = load_config(options.config);
  std::optional<CarveoutRates> rates;
  if (change == ChipChange::kL2Size && !options.carveout_rates.empty()) {
    rates = read_carveout_rates(options.carveout_rates);
  }
  ValidationTable t;
  t.change = change;
  t.measured_path = measured_path;
  t.config = options.config;
  for (const RawSetting& s : file.settings) {
    t.settings.push_back({s.label,
                          override_of(s, change, base, measured_path, rates ? &*rates : nullptr),
                          s.reference});
  }
  t.cases = static_cast<int>(file.cases.size());

  // One simulation per case and distinct override; a second with the L2 flushed between
  // kernels, as ncu measured the DRAM bytes, for a case of several kernels when the file has them.
  struct Job {
    std::size_t case_index;
    std::string override_text;
    bool flush;
  };
  std::vector<Job> jobs;
  std::map<std::tuple<std::size_t, std::string, bool>, std::size_t> job_index;
  auto job_of = [&](std::size_t c, const std::string& ov, bool flush) {
    const auto key = std::make_tuple(c, ov, flush);
    auto it = job_index.find(key);
    if (it == job_index.end()) {
      it = job_index.emplace(key, jobs.size()).first;
      jobs.push_back({c, ov, flush});
    }
    return it->second;
  };
  const std::size_t n_settings = t.settings.size();
  std::vector<std::size_t> run_job(file.cases.size() * n_settings);
  std::vector<std::size_t> dram_job(file.cases.size() * n_settings);
  for (std::size_t c = 0; c < file.cases.size(); ++c) {
    const bool several = file.cases[c].kernel_names.size() > 1;
    for (std::size_t s = 0; s < n_settings; ++s) {
      if (file.cases[c].at[s].empty()) continue;
      const std::string& ov = t.settings[s].override_text;
      run_job[c * n_settings + s] = job_of(c, ov, false);
      dram_job[c * n_settings + s] =
          file.has_dram && several ? job_of(c, ov, true) : run_job[c * n_settings + s];
    }
  }
  std::vector<SimFigures> results(jobs.size());
  parallel_for(jobs.size(), options.threads, [&](std::size_t i) {
    const Job& j = jobs[i];
    results[i] =
        simulate_case(options.config, j.override_text, file.cases[j.case_index].params, j.flush);
  });
  t.simulations = static_cast<int>(jobs.size());

  for (std::size_t c = 0; c < file.cases.size(); ++c) {
    const ChangeCase& cc = file.cases[c];
    const bool several = cc.kernel_names.size() > 1;
    // The total first, then the kernels of a case of several.
    std::vector<std::string> kernels = {"total"};
    if (several) kernels.insert(kernels.end(), cc.kernel_names.begin(), cc.kernel_names.end());
    for (const std::string& kernel : kernels) {
      for (std::size_t s = 0; s < n_settings; ++s) {
        const auto& at = cc.at[s];
        if (at.empty()) continue;
        const SimFigures& sim = results[run_job[c * n_settings + s]];
        const SimFigures& dram = results[dram_job[c * n_settings + s]];
        ValidationRow r;
        r.case_label = cc.label;
        r.family =
            std::string(to_string(cc.params.workload)) + (kernel == "total" ? "" : " " + kernel);
        r.kernel = kernel;
        r.setting = t.settings[s].label;
        r.override_text = t.settings[s].override_text;
        r.reference = t.settings[s].reference;
        if (kernel == "total") {
          r.sim_time_s = sim.time_s;
          double dram_sum = 0;
          for (const auto& [name, bytes] : dram.kernel_dram_bytes) dram_sum += bytes;
          r.sim_dram_bytes = dram_sum;
          if (const auto it = at.find("total"); it != at.end()) {
            r.line = it->second.line;
            r.meas_time_s = it->second.time_s;
            r.meas_dram_bytes = it->second.dram_bytes;
          } else {
            // No total row: the kernels' sum (their times back to back, their bytes).
            double bytes = 0;
            bool all_bytes = true;
            for (const auto& [name, m] : at) {
              r.meas_time_s += m.time_s;
              if (m.dram_bytes)
                bytes += *m.dram_bytes;
              else
                all_bytes = false;
            }
            if (all_bytes) r.meas_dram_bytes = bytes;
          }
        } else {
          const auto it = at.find(kernel);
          if (it == at.end()) {
            throw UsageError(measured_path + ": " + cc.label + " has no row of kernel " + kernel +
                             " at " + r.setting);
          }
          const auto st = sim.kernel_time_s.find(kernel);
          if (st == sim.kernel_time_s.end()) {
            throw UsageError(measured_path + ":" + std::to_string(it->second.line) +
                             ": the model of " + cc.label + " has no kernel \"" + kernel + "\"");
          }
          r.line = it->second.line;
          r.meas_time_s = it->second.time_s;
          r.meas_dram_bytes = it->second.dram_bytes;
          r.sim_time_s = st->second;
          r.sim_dram_bytes = dram.kernel_dram_bytes.at(kernel);
        }
        if (!r.meas_dram_bytes) r.sim_dram_bytes.reset();
        t.rows.push_back(std::move(r));
      }
    }
  }
  fill_ratios(t.rows);
  t.summary = summarize(t.rows, t.settings);
  return t;
}

std::vector<FamilySummary> summarize(const std::vector<ValidationRow>& rows,
                                     const std::vector<ChangeSetting>& settings) {
  std::vector<std::string> families;
  for (const ValidationRow& r : rows) {
    if (std::find(families.begin(), families.end(), r.family) == families.end())
      families.push_back(r.family);
  }
  std::vector<FamilySummary> out;
  for (const std::string& family : families) {
    for (const ChangeSetting& s : settings) {
      std::vector<double> time_err, slow_err, meas_slow, sim_slow, dram_err, meas_growth,
          sim_growth;
      for (const ValidationRow& r : rows) {
        if (r.family != family || r.setting != s.label) continue;
        time_err.push_back(r.time_error());
        slow_err.push_back(r.slowdown_error());
        meas_slow.push_back(r.meas_slowdown);
        sim_slow.push_back(r.sim_slowdown);
        if (r.meas_dram_bytes && r.sim_dram_bytes && *r.meas_dram_bytes > 0) {
          dram_err.push_back(*r.sim_dram_bytes / *r.meas_dram_bytes - 1);
        }
        if (r.meas_dram_growth && r.sim_dram_growth) {
          meas_growth.push_back(*r.meas_dram_growth);
          sim_growth.push_back(*r.sim_dram_growth);
        }
      }
      if (time_err.empty()) continue;
      FamilySummary f;
      f.family = family;
      f.setting = s.label;
      f.reference = s.reference;
      f.cases = static_cast<int>(time_err.size());
      std::tie(f.time_mape, f.time_worst) = mape_worst(time_err);
      std::tie(f.slowdown_mape, f.slowdown_worst) = mape_worst(slow_err);
      f.meas_slowdown_gmean = gmean(meas_slow);
      f.sim_slowdown_gmean = gmean(sim_slow);
      f.dram_cases = static_cast<int>(dram_err.size());
      std::tie(f.dram_mape, f.dram_worst) = mape_worst(dram_err);
      f.meas_dram_growth_gmean = gmean(meas_growth);
      f.sim_dram_growth_gmean = gmean(sim_growth);
      out.push_back(std::move(f));
    }
  }
  return out;
}

namespace {

constexpr const char* kCsvHeader[] = {
    "experiment",      "measured",       "config",           "case",
    "family",          "kernel",         "setting",          "override",
    "reference",       "line",           "meas_time_s",      "sim_time_s",
    "time_error",      "meas_slowdown",  "sim_slowdown",     "slowdown_error",
    "meas_dram_bytes", "sim_dram_bytes", "meas_dram_growth", "sim_dram_growth"};

std::string optional_num(const std::optional<double>& v) { return v ? json_num(*v) : ""; }

}  // namespace

std::string validation_to_csv(const std::vector<ValidationTable>& tables) {
  std::string out =
      csv_line(std::vector<std::string>(std::begin(kCsvHeader), std::end(kCsvHeader)));
  for (const ValidationTable& t : tables) {
    for (const ValidationRow& r : t.rows) {
      out += csv_line({chip_change_name(t.change),
                       t.measured_path,
                       t.config,
                       r.case_label,
                       r.family,
                       r.kernel,
                       r.setting,
                       r.override_text,
                       r.reference ? "1" : "0",
                       std::to_string(r.line),
                       json_num(r.meas_time_s),
                       json_num(r.sim_time_s),
                       json_num(r.time_error()),
                       json_num(r.meas_slowdown),
                       json_num(r.sim_slowdown),
                       json_num(r.slowdown_error()),
                       optional_num(r.meas_dram_bytes),
                       optional_num(r.sim_dram_bytes),
                       optional_num(r.meas_dram_growth),
                       optional_num(r.sim_dram_growth)});
    }
  }
  return out;
}

std::vector<ValidationTable> read_validation_csv(const std::string& path) {
  const CsvCells csv(path);
  int col[std::size(kCsvHeader)];
  for (std::size_t i = 0; i < std::size(kCsvHeader); ++i) col[i] = csv.column(kCsvHeader[i]);
  enum {
    kExp,
    kMeasured,
    kConfig,
    kCase,
    kFamily,
    kKernel,
    kSetting,
    kOverride,
    kReference,
    kLine,
    kMeasTime,
    kSimTime,
    kTimeErr,
    kMeasSlow,
    kSimSlow,
    kSlowErr,
    kMeasDram,
    kSimDram,
    kMeasGrowth,
    kSimGrowth
  };
  std::vector<ValidationTable> tables;
  for (std::size_t r = 0; r < csv.table().rows.size(); ++r) {
    const std::string& exp = csv.text(r, col[kExp]);
    ChipChange change;
    if (exp == chip_change_name(ChipChange::kSmCount)) {
      change = ChipChange::kSmCount;
    } else if (exp == chip_change_name(ChipChange::kL2Size)) {
      change = ChipChange::kL2Size;
    } else {
      throw UsageError(csv.where(r, col[kExp]) + ": not an experiment (sm-count, l2-size): \"" +
                       exp + "\"");
    }
    if (tables.empty() || tables.back().change != change ||
        tables.back().measured_path != csv.text(r, col[kMeasured])) {
      ValidationTable t;
      t.change = change;
      t.measured_path = csv.text(r, col[kMeasured]);
      t.config = csv.text(r, col[kConfig]);
      tables.push_back(std::move(t));
    }
    ValidationTable& t = tables.back();
    ValidationRow v;
    v.case_label = csv.text(r, col[kCase]);
    v.family = csv.text(r, col[kFamily]);
    v.kernel = csv.text(r, col[kKernel]);
    v.setting = csv.text(r, col[kSetting]);
    v.override_text = csv.text(r, col[kOverride]);
    const std::string& ref = csv.text(r, col[kReference]);
    if (ref != "0" && ref != "1")
      throw UsageError(csv.where(r, col[kReference]) + ": not 0 or 1: \"" + ref + "\"");
    v.reference = ref == "1";
    v.line = static_cast<int>(csv.required_number(r, col[kLine]));
    v.meas_time_s = csv.required_number(r, col[kMeasTime]);
    v.sim_time_s = csv.required_number(r, col[kSimTime]);
    v.meas_slowdown = csv.required_number(r, col[kMeasSlow]);
    v.sim_slowdown = csv.required_number(r, col[kSimSlow]);
    v.meas_dram_bytes = csv.number(r, col[kMeasDram]);
    v.sim_dram_bytes = csv.number(r, col[kSimDram]);
    v.meas_dram_growth = csv.number(r, col[kMeasGrowth]);
    v.sim_dram_growth = csv.number(r, col[kSimGrowth]);
    if (v.meas_time_s <= 0 || v.meas_slowdown <= 0) {
      throw UsageError(csv.where(r, col[kMeasTime]) + ": a time and a slowdown must be positive");
    }
    const auto known = std::find_if(t.settings.begin(), t.settings.end(),
                                    [&](const ChangeSetting& s) { return s.label == v.setting; });
    if (known == t.settings.end()) t.settings.push_back({v.setting, v.override_text, v.reference});
    t.rows.push_back(std::move(v));
  }
  if (tables.empty()) throw UsageError(path + ": no rows");
  for (ValidationTable& t : tables) {
    std::vector<std::string> cases;
    for (const ValidationRow& v : t.rows) {
      if (std::find(cases.begin(), cases.end(), v.case_label) == cases.end())
        cases.push_back(v.case_label);
    }
    t.cases = static_cast<int>(cases.size());
    t.summary = summarize(t.rows, t.settings);
  }
  return tables;
}

std::string validation_to_json(const std::vector<ValidationTable>& tables) {
  using Layout = JsonWriter::Layout;
  JsonWriter w;
  const auto optional = [&](std::string_view key, const std::optional<double>& v) {
    if (v) {
      w.number(key, *v);
    } else {
      w.null(key);
    }
  };
  w.open("", '{');
  w.open("experiments", '[');
  for (const ValidationTable& t : tables) {
    w.open("", '{');
    w.string("experiment", chip_change_name(t.change));
    w.string("measured", t.measured_path);
    w.string("config", t.config);
    w.integer("cases", t.cases);
    w.integer("simulations", t.simulations);
    w.open("settings", '[');
    for (const ChangeSetting& s : t.settings) {
      w.open("", '{', Layout::kInline);
      w.string("label", s.label);
      w.string("override", s.override_text);
      w.boolean("reference", s.reference);
      w.close();
    }
    w.close();
    w.open("rows", '[');
    for (const ValidationRow& r : t.rows) {
      w.open("", '{', Layout::kInline);
      w.string("case", r.case_label);
      w.string("family", r.family);
      w.string("kernel", r.kernel);
      w.string("setting", r.setting);
      w.integer("line", r.line);
      w.number("meas_time_s", r.meas_time_s);
      w.number("sim_time_s", r.sim_time_s);
      w.number("time_error", r.time_error());
      w.number("meas_slowdown", r.meas_slowdown);
      w.number("sim_slowdown", r.sim_slowdown);
      w.number("slowdown_error", r.slowdown_error());
      optional("meas_dram_bytes", r.meas_dram_bytes);
      optional("sim_dram_bytes", r.sim_dram_bytes);
      optional("meas_dram_growth", r.meas_dram_growth);
      optional("sim_dram_growth", r.sim_dram_growth);
      w.close();
    }
    w.close();
    w.open("summary", '[');
    for (const FamilySummary& f : t.summary) {
      w.open("", '{', Layout::kInline);
      w.string("family", f.family);
      w.string("setting", f.setting);
      w.integer("cases", f.cases);
      w.number("time_mape", f.time_mape);
      w.number("time_worst", f.time_worst);
      w.number("meas_slowdown_gmean", f.meas_slowdown_gmean);
      w.number("sim_slowdown_gmean", f.sim_slowdown_gmean);
      w.number("slowdown_mape", f.slowdown_mape);
      w.number("slowdown_worst", f.slowdown_worst);
      w.integer("dram_cases", f.dram_cases);
      w.number("dram_mape", f.dram_mape);
      w.number("dram_worst", f.dram_worst);
      w.number("meas_dram_growth_gmean", f.meas_dram_growth_gmean);
      w.number("sim_dram_growth_gmean", f.sim_dram_growth_gmean);
      w.close();
    }
    w.close();
    w.close();
  }
  w.close();
  w.close();
  return w.take();
}

namespace {

/// `cells` padded to `widths` (left-aligned where the width is negative), spaces trimmed at the end.
std::string text_row(const std::vector<std::string>& cells, const std::vector<int>& widths) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const int w = widths[i];
    const std::size_t width = static_cast<std::size_t>(std::abs(w));
    std::string cell = cells[i];
    // Pad by characters shown, not bytes ("—" is three bytes).
    std::size_t shown = 0;
    for (const char ch : cell) shown += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    const std::string pad(shown < width ? width - shown : 0, ' ');
    line += (i ? "  " : "") + (w < 0 ? cell + pad : pad + cell);
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

std::string ms(double s) { return printf_text("%.4f", 1e3 * s); }
std::string ratio(double v) { return printf_text("%.3f", v); }
std::string mib(double b) { return printf_text("%.2f", b / (1024.0 * 1024.0)); }

}  // namespace

std::string validation_to_text(const ValidationTable& t, bool summary_only) {
  const bool sm = t.change == ChipChange::kSmCount;
  bool dram = false;
  for (const ValidationRow& r : t.rows) dram = dram || r.sim_dram_bytes.has_value();
  std::string out = std::string("validate ") + chip_change_name(t.change) + ": " +
                    (sm ? "fewer SMs (green contexts)" : "less L2 (persisting-L2 carve-out)") +
                    "\n";
  out += "  measured: " + t.measured_path + ", " + std::to_string(t.cases) + " cases\n";
  out += "  config:   " + t.config + "\n";
  out += "  settings:";
  for (const ChangeSetting& s : t.settings) {
    out += " " + s.label + " (" + s.override_text + (s.reference ? ", reference" : "") + ")" +
           (&s == &t.settings.back() ? "" : ",");
  }
  out += "\n";
  if (t.simulations > 0) out += "  simulations: " + std::to_string(t.simulations) + "\n";
  out += "  time error = sim / meas - 1; slowdown = time / time at " + t.settings.front().label +
         "; slowdown error = sim slowdown / meas slowdown - 1\n";
  if (dram)
    out +=
        "  DRAM: ncu read + write, simulated with the L2 flushed between kernels; growth = DRAM / DRAM at " +
        t.settings.front().label + "\n";

  if (!summary_only) {
    out += "\n";
    std::vector<int> w = {-54, -8, -12, 10, 10, 7, 7, 7, 7};
    std::vector<std::string> head = {"case",  "kernel", "setting", "meas ms", "sim ms",
                                     "error", "meas x", "sim x",   "x err"};
    if (dram) {
      for (const int x : {9, 9, 7, 7, 7}) w.push_back(x);
      for (const char* h : {"meas MiB", "sim MiB", "error", "meas g", "sim g"})
        head.emplace_back(h);
    }
    out += text_row(head, w);
    std::string last_case;
    for (const ValidationRow& r : t.rows) {
      std::vector<std::string> cells = {r.case_label == last_case ? "" : r.case_label,
                                        r.kernel,
                                        r.setting,
                                        ms(r.meas_time_s),
                                        ms(r.sim_time_s),
                                        percent(r.time_error())};
      last_case = r.case_label;
      if (r.reference) {
        cells.insert(cells.end(), {"1", "1", "—"});
      } else {
        cells.insert(cells.end(),
                     {ratio(r.meas_slowdown), ratio(r.sim_slowdown), percent(r.slowdown_error())});
      }
      if (dram) {
        if (r.meas_dram_bytes && r.sim_dram_bytes) {
          cells.insert(cells.end(), {mib(*r.meas_dram_bytes), mib(*r.sim_dram_bytes),
                                     percent(*r.sim_dram_bytes / *r.meas_dram_bytes - 1)});
        } else {
          cells.insert(cells.end(), {"", "", ""});
        }
        if (r.meas_dram_growth && !r.reference) {
          cells.insert(cells.end(), {ratio(*r.meas_dram_growth), ratio(*r.sim_dram_growth)});
        } else {
          cells.insert(cells.end(), {"", ""});
        }
      }
      out += text_row(cells, w);
    }
  }

  out +=
      "\nsummary per family (time MAPE: mean |time error|; x: geometric mean of the slowdowns; x MAPE: mean |slowdown error|)\n";
  std::vector<int> w = {-16, 5, -12, 9, 7, 7, 7, 7, 7};
  std::vector<std::string> head = {"family", "cases", "setting", "time MAPE", "worst",
                                   "meas x", "sim x", "x MAPE",  "worst"};
  if (dram) {
    for (const int x : {9, 7, 7, 7}) w.push_back(x);
    for (const char* h : {"DRAM MAPE", "worst", "meas g", "sim g"}) head.emplace_back(h);
  }
  out += text_row(head, w);
  std::string last_family;
  for (const FamilySummary& f : t.summary) {
    std::vector<std::string> cells = {f.family == last_family ? "" : f.family,
                                      f.family == last_family ? "" : std::to_string(f.cases),
                                      f.setting, printf_text("%.1f%%", 100 * f.time_mape),
                                      percent(f.time_worst)};
    last_family = f.family;
    if (f.reference) {
      cells.insert(cells.end(), {"1", "1", "—", "—"});
    } else {
      cells.insert(cells.end(),
                   {ratio(f.meas_slowdown_gmean), ratio(f.sim_slowdown_gmean),
                    printf_text("%.1f%%", 100 * f.slowdown_mape), percent(f.slowdown_worst)});
    }
    if (dram) {
      if (f.dram_cases > 0) {
        cells.insert(cells.end(),
                     {printf_text("%.1f%%", 100 * f.dram_mape), percent(f.dram_worst)});
      } else {
        cells.insert(cells.end(), {"", ""});
      }
      if (f.dram_cases > 0 && !f.reference) {
        cells.insert(cells.end(),
                     {ratio(f.meas_dram_growth_gmean), ratio(f.sim_dram_growth_gmean)});
      } else {
        cells.insert(cells.end(), {"", ""});
      }
    }
    out += text_row(cells, w);
  }
  return out;
}

std::vector<std::string> compare_tables(const std::vector<ValidationTable>& fresh,
                                        const std::vector<ValidationTable>& committed) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, const ValidationRow*> index;
  for (const ValidationTable& t : committed) {
    for (const ValidationRow& r : t.rows)
      index[{chip_change_name(t.change), r.case_label, r.kernel, r.setting}] = &r;
  }
  auto differs = [](double a, double b) {
    return std::fabs(a - b) > 1e-6 * std::max(std::fabs(a), std::fabs(b));
  };
  std::vector<std::string> out;
  for (const ValidationTable& t : fresh) {
    for (const ValidationRow& r : t.rows) {
      const std::string name = std::string(chip_change_name(t.change)) + ": " + r.case_label + " " +
                               r.kernel + " " + r.setting;
      const auto it = index.find({chip_change_name(t.change), r.case_label, r.kernel, r.setting});
      if (it == index.end()) {
        out.push_back(name + ": not in the committed table");
        continue;
      }
      const ValidationRow& c = *it->second;
      auto check = [&](const char* what, double a, double b) {
        if (differs(a, b))
          out.push_back(name + ": " + what + " " + json_num(a) + ", committed " + json_num(b));
      };
      check("meas_time_s", r.meas_time_s, c.meas_time_s);
      check("sim_time_s", r.sim_time_s, c.sim_time_s);
      check("meas_slowdown", r.meas_slowdown, c.meas_slowdown);
      check("sim_slowdown", r.sim_slowdown, c.sim_slowdown);
      if (r.sim_dram_bytes.has_value() != c.sim_dram_bytes.has_value()) {
        out.push_back(name + ": DRAM bytes present in one table only");
      } else if (r.sim_dram_bytes) {
        check("meas_dram_bytes", *r.meas_dram_bytes, *c.meas_dram_bytes);
        check("sim_dram_bytes", *r.sim_dram_bytes, *c.sim_dram_bytes);
      }
    }
  }
  return out;
}

}  // namespace memwall
