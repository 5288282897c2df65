#include "studies/calibration.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <utility>

#include <Eigen/Dense>

#include "models/model_source.h"
#include "models/param_spec.h"
#include "models/workload_registry.h"
#include "sim/core/error.h"
#include "sim/core/json.h"
#include "sim/core/json_writer.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "sim/report/provenance.h"
#include "studies/calibration_load.h"
#include "studies/parallel_for.h"
#include "traces/interruptible_source.h"

namespace memwall {
namespace {

constexpr double kMinFraction = 0.01;
constexpr double kMinOverhead_s = 1e-12;
constexpr double kMaxOverhead_s = 100e-6;
constexpr double kFdStep = 0.05;  ///< forward-difference step in log(parameter)
constexpr double kMaxStep = 1.0;  ///< largest change of one log(parameter) in a step (a factor e)
constexpr double kLaunchStart_s = 1e-6;  ///< where a launch overhead below it starts
constexpr double kOpStart_s = 10e-9;  ///< where a per-op overhead below it starts

bool is_fraction(FitParam p) {
  return p != FitParam::op_overhead && p != FitParam::launch_overhead;
}

/// Clamps a parameter to its physical range.
double clamp_param(FitParam p, double v) {
  return is_fraction(p) ? std::clamp(v, kMinFraction, 1.0)
                        : std::clamp(v, kMinOverhead_s, kMaxOverhead_s);
}

/// The value as the calibrated YAML writes it (4 decimals; whole picoseconds).
double rounded_param(FitParam p, double v) {
  if (is_fraction(p)) return std::clamp(std::round(v * 1e4) / 1e4, kMinFraction, 1.0);
  return std::round(v * 1e12) / 1e12;
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

/// ½Σ log(sim/meas)² over the rows, and the residual vector.
Eigen::VectorXd log_residuals(const std::vector<KernelComparison>& rows) {
  Eigen::VectorXd r(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    r(static_cast<Eigen::Index>(i)) = std::log(rows[i].sim_time_s / rows[i].meas_time_s);
  }
  return r;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

std::string param_text(FitParam p, double v) {
  return is_fraction(p) ? fmt("%.4f", v) : fmt("%.3f ns", v * 1e9);
}

}  // namespace

std::string fit_param_name(FitParam p) {
  switch (p) {
    case FitParam::tensor: return "tensor";
    case FitParam::mma_sync: return "mma_sync";
    case FitParam::fp32: return "fp32";
    case FitParam::sfu: return "sfu";
    case FitParam::l2: return "l2";
    case FitParam::hbm: return "hbm";
    case FitParam::op_overhead: return "op_overhead";
    case FitParam::launch_overhead: return "launch_overhead";
    case FitParam::pipe_serial: return "pipe_serial";
    case FitParam::l2_capacity: return "l2_capacity";
  }
  return "?";
}

std::vector<FitParam> parse_fit_params(const std::string& list) {
  constexpr FitParam kAll[] = {
      FitParam::tensor,      FitParam::mma_sync,   FitParam::fp32,        FitParam::sfu,
      FitParam::l2,          FitParam::hbm,        FitParam::op_overhead, FitParam::launch_overhead,
      FitParam::pipe_serial, FitParam::l2_capacity};
  std::vector<FitParam> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, comma - start);
    const auto it = std::find_if(std::begin(kAll), std::end(kAll),
                                 [&](FitParam p) { return fit_param_name(p) == name; });
    if (it == std::end(kAll)) {
      throw UsageError(
          "--params: unknown parameter \"" + name +
          "\" (known: tensor, mma_sync, fp32, sfu, l2, hbm, op_overhead, launch_overhead, pipe_serial, l2_capacity)");
    }
    if (std::find(out.begin(), out.end(), *it) != out.end()) {
      throw UsageError("--params: \"" + name + "\" given twice");
    }
    out.push_back(*it);
    start = comma + 1;
  }
  return out;
}

double fit_param_value(const HardwareConfig& c, FitParam p) {
  switch (p) {
    case FitParam::tensor: return c.efficiency.tensor;
    case FitParam::mma_sync: return c.efficiency.mma_sync;
    case FitParam::fp32: return c.efficiency.fp32;
    case FitParam::sfu: return c.efficiency.sfu;
    case FitParam::l2: return c.efficiency.l2;
    case FitParam::hbm: return c.efficiency.hbm;
    case FitParam::op_overhead: return static_cast<double>(c.efficiency.op_overhead) * 1e-12;
    case FitParam::launch_overhead:
      return static_cast<double>(c.efficiency.launch_overhead) * 1e-12;
    case FitParam::l2_capacity: return c.efficiency.l2_capacity;
    case FitParam::pipe_serial: return c.efficiency.pipe_serial;
  }
  return 0;
}

void set_fit_param(HardwareConfig& c, FitParam p, double v) {
  switch (p) {
    case FitParam::tensor: c.efficiency.tensor = v; break;
    case FitParam::mma_sync: c.efficiency.mma_sync = v; break;
    case FitParam::fp32: c.efficiency.fp32 = v; break;
    case FitParam::sfu: c.efficiency.sfu = v; break;
    case FitParam::l2: c.efficiency.l2 = v; break;
    case FitParam::hbm: c.efficiency.hbm = v; break;
    case FitParam::op_overhead:
      c.efficiency.op_overhead = static_cast<Tick>(std::llround(v * 1e12));
      break;
    case FitParam::launch_overhead:
      c.efficiency.launch_overhead = static_cast<Tick>(std::llround(v * 1e12));
      break;
    case FitParam::l2_capacity: c.efficiency.l2_capacity = v; break;
    case FitParam::pipe_serial: c.efficiency.pipe_serial = v; break;
  }
}

HoldOutRule parse_hold_out(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw UsageError(
        "--hold-out: expected NAME=V1,V2,... (e.g. seq=1024,8192 or block_kv=64), got \"" + text +
        "\"");
  }
  HoldOutRule rule;
  rule.param = text.substr(0, eq);
  rule.values.clear();
  if (rule.param != "workload" && find_workload_param(rule.param) == nullptr) {
    throw UsageError(
        "--hold-out: unknown parameter \"" + rule.param +
        "\" (workload or a workload parameter: seq, head_dim, block_q, block_kv, stages, ...)");
  }
  std::size_t start = eq + 1;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string v =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (v.empty()) throw UsageError("--hold-out: an empty value in \"" + text + "\"");
    rule.values.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return rule;
}

std::string hold_out_text(const HoldOutRule& rule) {
  std::string out = rule.param + " in {";
  for (std::size_t i = 0; i < rule.values.size(); ++i) out += (i ? ", " : "") + rule.values[i];
  return out + "}";
}

std::string hold_out_flag(const HoldOutRule& rule) {
  std::string out = rule.param + "=";
  for (std::size_t i = 0; i < rule.values.size(); ++i) out += (i ? "," : "") + rule.values[i];
  return out;
}

bool is_held_out(const MeasuredCase& c, const HoldOutRule& rule) {
  std::string value;
  if (rule.param == "workload") {
    value = std::string(to_string(c.params.workload));
  } else {
    const CatalogueParam* param = find_workload_param(rule.param);
    if (param == nullptr || !param->spec->field.get(c.params).has_value()) return false;
    const WorkloadPlugin* plugin = &workload_plugin(c.params.workload);
    const bool declared = std::any_of(param->uses.begin(), param->uses.end(),
                                      [&](const ParamUse& u) { return u.plugin == plugin; });
    if (!declared) return false;
    value = param_text(*param->spec, c.params);
  }
  return std::find(rule.values.begin(), rule.values.end(), value) != rule.values.end();
}

std::vector<std::size_t> small_heldout_cases(const std::vector<MeasuredCase>& cases,
                                             const HoldOutRule& rule) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].profiled() && is_held_out(cases[i], rule) && cases[i].params.seq <= 1024)
      out.push_back(i);
  }
  return out;
}

std::vector<KernelComparison> compare_cases(const HardwareConfig& config,
                                            const std::vector<MeasuredCase>& cases,
                                            const std::vector<std::size_t>& which,
                                            unsigned threads) {
  std::vector<std::vector<KernelComparison>> per_case(which.size());
  parallel_for(which.size(), threads, [&](std::size_t slot) {
    const std::size_t ci = which.at(slot);
    const MeasuredCase& mc = cases.at(ci);
    std::unique_ptr<TraceSource> source = make_model_source(mc.params);
    InterruptibleSource polled(*source);
    SimOptions options;
    options.flush_l2_between_kernels = true;
    const RunResult run = simulate(config, polled, options);
    for (const MeasuredKernel& k : mc.kernels) {
      if (!k.profiled()) continue;
      const KernelResult& sim = model_kernel(run.kernels, mc, k);
      KernelComparison c;
      c.case_index = ci;
      c.kernel = k.name;
      c.line = k.line;
      c.sim_time_s = static_cast<double>(sim.duration()) * 1e-12;
      c.meas_time_s = *k.ncu_time_s;
      c.sim_dram = static_cast<double>(sim.traffic.dram_read_bytes + sim.traffic.dram_write_bytes);
      c.meas_dram = *k.dram_read_bytes + *k.dram_write_bytes;
      c.sim_l2 = static_cast<double>(sim.traffic.l2_read_bytes + sim.traffic.l2_write_bytes);
      c.meas_l2 = *k.xbar_read_bytes + *k.xbar_write_bytes;
      if (!(c.meas_time_s > 0) || !(c.sim_time_s > 0)) {
        throw UsageError("line " + std::to_string(k.line) + ": " + mc.label + " " + k.name +
                         ": a kernel time of zero cannot be compared");
      }
      per_case[slot].push_back(std::move(c));
    }
  });
  std::vector<KernelComparison> rows;
  for (auto& v : per_case) {
    for (auto& r : v) rows.push_back(std::move(r));
  }
  return rows;
}

ErrorMetrics error_metrics(const std::vector<KernelComparison>& rows) {
  ErrorMetrics m;
  m.rows = rows.size();
  if (rows.empty()) return m;
  std::vector<double> te, de, le, ls, lm;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const KernelComparison& r = rows[i];
    te.push_back(std::abs(r.time_error()));
    if (te.back() > m.time_max_error || i == 0) {
      m.time_max_error = te.back();
      m.time_worst = i;
    }
    if (r.meas_dram > 0) {
      de.push_back(std::abs(r.dram_error()));
      if (de.back() > m.dram_max_error || de.size() == 1) {
        m.dram_max_error = de.back();
        m.dram_worst = i;
      }
    }
    if (r.meas_l2 > 0) {
      le.push_back(std::abs(r.l2_error()));
      m.l2_max_error = std::max(m.l2_max_error, le.back());
    }
    ls.push_back(std::log(r.sim_time_s));
    lm.push_back(std::log(r.meas_time_s));
  }
  m.time_mape = mean(te);
  m.dram_mape = mean(de);
  m.l2_mape = mean(le);
  const double ms = mean(ls), mm = mean(lm);
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < ls.size(); ++i) {
    sxy += (ls[i] - ms) * (lm[i] - mm);
    sxx += (ls[i] - ms) * (ls[i] - ms);
    syy += (lm[i] - mm) * (lm[i] - mm);
  }
  m.time_correlation = (sxx > 0 && syy > 0) ? sxy / std::sqrt(sxx * syy) : 0.0;
  return m;
}

namespace {

/// Stage 1 of run_calibration: the l2_capacity with the least DRAM MAPE over res.iter_cases (see
/// calibration.h for the search); counts its sweeps in res and reports each on options.progress.
double fit_l2_capacity(const HardwareConfig& base, const std::vector<MeasuredCase>& cases,
                       const CalibrationOptions& options, CalibrationResult& res) {
  std::vector<std::pair<int, double>> tried;  // (hundredths, DRAM MAPE)
  auto mape_at = [&](int hundredths) {
    for (const auto& [h, m] : tried) {
      if (h == hundredths) return m;
    }
    HardwareConfig c = base;
    c.efficiency.l2_capacity = hundredths / 100.0;
    const double m =
        error_metrics(compare_cases(c, cases, res.iter_cases, options.threads)).dram_mape;
    ++res.evaluations;
    ++res.capacity_evaluations;
    tried.emplace_back(hundredths, m);
    if (options.progress) {
      options.progress("l2_capacity " + fmt("%.2f", hundredths / 100.0) + ": DRAM MAPE " +
                       fmt("%.2f%%", m * 100));
    }
    return m;
  };
  int best = 100;
  double best_mape = mape_at(best);
  const auto consider = [&](int h) {
    const double m = mape_at(h);
    if (m < best_mape) {
      best = h;
      best_mape = m;
    }
  };
  for (int h = 95; h >= 25; h -= 5) consider(h);
  const int centre = best;
  for (int h = std::min(100, centre + 4); h >= std::max(1, centre - 4); --h) consider(h);
  res.capacity_dram_mape = best_mape;
  return best / 100.0;
}

}  // namespace

namespace {

/// Splits the profiled cases within the evaluation budget into fit (and, within the fit budget,
/// the iterations' set) and held-out; counts the others.
void split_cases(const std::vector<MeasuredCase>& cases, const CalibrationOptions& options,
                 CalibrationResult& res) {
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (!cases[i].profiled()) {
      ++res.unprofiled_cases;
      continue;
    }
    std::uint64_t bytes = 0;
    for (const KernelSectorBytes& k : count_sector_bytes(cases[i].params))
      bytes += k.read_bytes + k.write_bytes;
    if (bytes > options.eval_budget_bytes) {
      ++res.skipped_cases;
      continue;
    }
    if (is_held_out(cases[i], options.hold_out)) {
      res.heldout_cases.push_back(i);
      continue;
    }
    res.fit_cases.push_back(i);
    if (bytes <= options.fit_budget_bytes) res.iter_cases.push_back(i);
  }
  res.small_heldout_cases = small_heldout_cases(cases, options.hold_out);
  res.hold_out = options.hold_out;
}

/// Every profiled case simulated on `res.calibrated`: the rows and metrics of the fit set, the
/// held-out set and its small subset.
void evaluate_rows(const std::vector<MeasuredCase>& cases, const CalibrationOptions& options,
                   CalibrationResult& res) {
  res.fit_rows = compare_cases(res.calibrated, cases, res.fit_cases, options.threads);
  res.heldout_rows = compare_cases(res.calibrated, cases, res.heldout_cases, options.threads);
  res.fit = error_metrics(res.fit_rows);
  res.heldout = error_metrics(res.heldout_rows);
  std::vector<KernelComparison> small;
  for (const KernelComparison& k : res.heldout_rows) {
    if (std::find(res.small_heldout_cases.begin(), res.small_heldout_cases.end(), k.case_index) !=
        res.small_heldout_cases.end()) {
      small.push_back(k);
    }
  }
  res.small_heldout = error_metrics(small);
}

}  // namespace

CalibrationResult evaluate_config(const HardwareConfig& config,
                                  const std::vector<MeasuredCase>& cases,
                                  const std::string& measured_path,
                                  const CalibrationOptions& options) {
  CalibrationResult res;
  res.measured_path = measured_path;
  res.eval_budget_bytes = options.eval_budget_bytes;
  res.evaluated_only = true;
  split_cases(cases, options, res);
  res.calibrated = config;
  evaluate_rows(cases, options, res);
  return res;
}

CalibrationResult run_calibration(const HardwareConfig& base,
                                  const std::vector<MeasuredCase>& cases,
                                  const std::string& measured_path,
                                  const CalibrationOptions& options) {
  if (options.params.empty()) throw UsageError("calibrate: no parameter to fit");
  CalibrationResult res;
  res.measured_path = measured_path;
  res.eval_budget_bytes = options.eval_budget_bytes;
  // Split the cases; the iterations use the fit cases within the byte budget.
  split_cases(cases, options, res);
  if (res.iter_cases.empty())
    throw UsageError("calibrate: no profiled fit case within the fit budget");

  // Stage 1 (when asked): the L2's usable capacity, from the DRAM bytes alone.
  HardwareConfig start = base;
  std::vector<FitParam> params;  // the parameters fitted to the times
  for (const FitParam p : options.params) {
    if (p != FitParam::l2_capacity) params.push_back(p);
  }
  if (params.size() != options.params.size()) {
    const double v = fit_l2_capacity(base, cases, options, res);
    res.fitted.push_back({FitParam::l2_capacity, base.efficiency.l2_capacity, v});
    start.efficiency.l2_capacity = v;
  }

  // Stage 2: Levenberg–Marquardt on the log time residuals.
  const std::size_t first = res.fitted.size();  // index of params[0] in res.fitted
  const std::size_t np = params.size();
  const auto n = static_cast<Eigen::Index>(np);
  auto config_at = [&](const Eigen::VectorXd& x) {
    HardwareConfig c = start;
    for (std::size_t j = 0; j < np; ++j) {
      set_fit_param(c, params[j],
                    clamp_param(params[j], std::exp(x(static_cast<Eigen::Index>(j)))));
    }
    return c;
  };
  auto residuals_at = [&](const Eigen::VectorXd& x) {
    ++res.evaluations;
    return log_residuals(compare_cases(config_at(x), cases, res.iter_cases, options.threads));
  };
  auto clamp_x = [&](Eigen::VectorXd x) {
    for (std::size_t j = 0; j < np; ++j) {
      auto& v = x(static_cast<Eigen::Index>(j));
      v = std::log(clamp_param(params[j], std::exp(v)));
    }
    return x;
  };

  // Start: the base values (a zero overhead starts at 1 ns, where its log is defined).
  Eigen::VectorXd x(n);
  for (std::size_t j = 0; j < np; ++j) {
    const FitParam p = params[j];
    double v = fit_param_value(base, p);
    res.fitted.push_back({p, v, v});
    if (p == FitParam::launch_overhead) v = std::max(v, kLaunchStart_s);
    if (p == FitParam::op_overhead) v = std::max(v, kOpStart_s);
    x(static_cast<Eigen::Index>(j)) = std::log(clamp_param(p, v));
  }
  res.before_fit = error_metrics(compare_cases(base, cases, res.iter_cases, options.threads));
  Eigen::VectorXd r = np > 0 ? residuals_at(x) : Eigen::VectorXd();
  double cost = 0.5 * r.squaredNorm();
  res.initial_cost = cost;
  double lambda = 1e-2;
  for (unsigned iter = 0; np > 0 && iter < options.max_iterations; ++iter) {
    // Forward-difference Jacobian, stepping away from the bound when at it.
    Eigen::MatrixXd jac(r.size(), n);
    for (Eigen::Index j = 0; j < n; ++j) {
      Eigen::VectorXd xs = x;
      const bool at_upper =
          is_fraction(params[static_cast<std::size_t>(j)]) && x(j) + kFdStep > 0.0;
      const double h = at_upper ? -kFdStep : kFdStep;
      xs(j) += h;
      jac.col(j) = (residuals_at(xs) - r) / h;
    }
    const Eigen::MatrixXd jtj = jac.transpose() * jac;
    const Eigen::VectorXd grad = jac.transpose() * r;
    bool accepted = false;
    bool converged = false;
    for (int attempt = 0; attempt < 6 && !accepted; ++attempt) {
      Eigen::MatrixXd a = jtj;
      for (Eigen::Index j = 0; j < n; ++j) a(j, j) += lambda * (jtj(j, j) + 1e-9);
      Eigen::VectorXd step = a.ldlt().solve(-grad);
      const double largest = step.cwiseAbs().maxCoeff();
      if (largest > kMaxStep) step *= kMaxStep / largest;
      const Eigen::VectorXd xn = clamp_x(x + step);
      if ((xn - x).norm() < 1e-6) break;
      const Eigen::VectorXd rn = residuals_at(xn);
      const double cn = 0.5 * rn.squaredNorm();
      if (cn < cost) {
        const double gain = (cost - cn) / cost;
        x = xn;
        r = rn;
        cost = cn;
        lambda = std::max(lambda / 3.0, 1e-6);
        accepted = true;
        ++res.iterations;
        if (options.progress) {
          std::string line =
              "iteration " + std::to_string(res.iterations) + ": cost " + fmt("%.6f", cost);
          for (std::size_t j = 0; j < np; ++j) {
            line += " " + fit_param_name(params[j]) + "=" +
                    param_text(params[j], std::exp(x(static_cast<Eigen::Index>(j))));
          }
          options.progress(line);
        }
        converged = gain < 1e-3;
      } else {
        lambda *= 4.0;
      }
    }
    if (!accepted || converged) break;
  }
  res.final_cost = cost;

  // The final values, rounded as the YAML writes them, then every profiled case.
  res.calibrated = start;
  for (std::size_t j = 0; j < np; ++j) {
    const FitParam p = params[j];
    const double v = rounded_param(p, clamp_param(p, std::exp(x(static_cast<Eigen::Index>(j)))));
    res.fitted[first + j].value = v;
    set_fit_param(res.calibrated, p, v);
  }
  validate_config(res.calibrated);
  evaluate_rows(cases, options, res);
  return res;
}

std::string calibrated_yaml(const CalibrationResult& res, const std::string& base_extends,
                            const std::string& date, const std::string& command) {
  std::string y;
  y += "# " + res.calibrated.name +
       ", calibrated: the efficiencies below were fitted by `memwall calibrate`\n";
  y += "# to the real kernels measured on the GPU; every other value comes from the base config.\n";
  y += "# measured: " + res.measured_path + "\n";
  y += "# date (UTC): " + date + "\n";
  y += "# command: " + command + "\n";
  y += "# fit: Levenberg-Marquardt on log(simulated / ncu kernel time), " +
       std::to_string(res.iterations) + " steps, " + std::to_string(res.evaluations) +
       " simulation sweeps over " + std::to_string(res.iter_cases.size()) + " cases\n";
  if (res.capacity_evaluations > 0) {
    y += "#   l2_capacity first, alone: least DRAM MAPE over the same cases (" +
         std::to_string(res.capacity_evaluations) + " of the sweeps; " +
         fmt("%.2f%%", res.capacity_dram_mape * 100) + ")\n";
  }
  const std::string rule = res.hold_out.param == "seq" ? "N" + hold_out_text(res.hold_out).substr(3)
                                                       : hold_out_text(res.hold_out);
  y += "#   held out: " + rule + " (" + std::to_string(res.heldout_cases.size()) + " cases)\n";
  auto line = [&](const char* set, const ErrorMetrics& m) {
    char buf[256];
    std::snprintf(
        buf, sizeof buf,
        "#   %-8s %3zu kernels: time MAPE %.1f%% (worst %.1f%%, r %.3f), DRAM MAPE %.1f%% (worst "
        "%.1f%%), SM->L2 MAPE %.2f%%\n",
        set, m.rows, m.time_mape * 100, m.time_max_error * 100, m.time_correlation,
        m.dram_mape * 100, m.dram_max_error * 100, m.l2_mape * 100);
    y += buf;
  };
  line("fit", res.fit);
  line("held out", res.heldout);
  y += "extends: " + base_extends + "\n";
  y += "name: " + res.calibrated.name + " (calibrated)\n";
  y += "description: " + res.calibrated.name + " with efficiencies fitted to measured kernels\n";
  y += "efficiency:\n";
  for (const FittedParam& f : res.fitted) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "  %-16s %-12s # base %s\n",
                  (fit_param_name(f.param) + ":").c_str(), param_text(f.param, f.value).c_str(),
                  param_text(f.param, f.initial).c_str());
    y += buf;
  }
  return y;
}

std::string calibration_to_json(const CalibrationResult& res,
                                const std::vector<MeasuredCase>& cases) {
  using Layout = JsonWriter::Layout;
  constexpr int kDigits = 6;  // the fit's figures: six significant digits
  JsonWriter w;
  const auto metrics = [&](std::string_view key, const ErrorMetrics& m) {
    w.open(key, '{', Layout::kInline);
    w.integer("rows", m.rows);
    w.number("time_mape", m.time_mape, kDigits);
    w.number("time_max_error", m.time_max_error, kDigits);
    w.number("time_correlation", m.time_correlation, kDigits);
    w.number("dram_mape", m.dram_mape, kDigits);
    w.number("dram_max_error", m.dram_max_error, kDigits);
    w.number("l2_mape", m.l2_mape, kDigits);
    w.number("l2_max_error", m.l2_max_error, kDigits);
    w.close();
  };
  w.open("", '{');
  w.string("measured", res.measured_path);
  w.string("config", res.calibrated.source_file);
  w.string("heldout_rule", hold_out_text(res.hold_out));
  w.open("params", '{', Layout::kInline);
  for (const FittedParam& f : res.fitted) w.number(fit_param_name(f.param), f.value, kDigits);
  w.close();
  w.integer("iterations", res.iterations);
  w.integer("evaluations", res.evaluations);
  w.integer("capacity_evaluations", res.capacity_evaluations);
  w.integer("iteration_cases", res.iter_cases.size());
  w.integer("skipped_cases", res.skipped_cases);
  w.number("initial_cost", res.initial_cost, kDigits);
  w.number("final_cost", res.final_cost, kDigits);
  metrics("before_fit", res.before_fit);
  metrics("fit", res.fit);
  metrics("heldout", res.heldout);
  metrics("heldout_small", res.small_heldout);
  w.open("rows", '[');
  const auto rows = [&](const std::vector<KernelComparison>& v, std::string_view set) {
    for (const KernelComparison& r : v) {
      w.open("", '{', Layout::kInline);
      w.string("set", set);
      w.string("case", cases[r.case_index].label);
      w.string("kernel", r.kernel);
      w.integer("line", r.line);
      w.number("sim_time_s", r.sim_time_s, kDigits);
      w.number("meas_time_s", r.meas_time_s, kDigits);
      w.number("sim_dram_bytes", r.sim_dram, kDigits);
      w.number("meas_dram_bytes", r.meas_dram, kDigits);
      w.number("sim_l2_bytes", r.sim_l2, kDigits);
      w.number("meas_l2_bytes", r.meas_l2, kDigits);
      w.close();
    }
  };
  rows(res.fit_rows, "fit");
  rows(res.heldout_rows, "heldout");
  w.close();
  w.close();
  return w.take();
}

std::string calibration_to_text(const CalibrationResult& res,
                                const std::vector<MeasuredCase>& cases) {
  std::string t;
  char buf[512];
  if (res.evaluated_only) {
    t += "Evaluated " + res.calibrated.name + " as it is (no fit): every profiled case simulated";
    if (const std::string eff = changed_efficiencies_text(res.calibrated); !eff.empty()) {
      t += "\n  efficiency: " + eff;
    }
    t += "\n";
  } else {
    t += "Fitted (" + std::to_string(res.iterations) + " Levenberg-Marquardt steps, " +
         std::to_string(res.evaluations) + " sweeps over " + std::to_string(res.iter_cases.size()) +
         " fit cases; cost " + fmt("%.4f", res.initial_cost) + " -> " +
         fmt("%.4f", res.final_cost) + "):\n";
    if (res.capacity_evaluations > 0) {
      t += "  (l2_capacity first, from DRAM bytes alone: " +
           std::to_string(res.capacity_evaluations) + " of the sweeps; DRAM MAPE " +
           fmt("%.2f%%", res.capacity_dram_mape * 100) + " on those cases)\n";
    }
    for (const FittedParam& f : res.fitted) {
      std::snprintf(buf, sizeof buf, "  efficiency.%-16s %12s   (base %s)\n",
                    fit_param_name(f.param).c_str(), param_text(f.param, f.value).c_str(),
                    param_text(f.param, f.initial).c_str());
      t += buf;
    }
  }
  t +=
      "\nPer kernel (time: ncu_time_s; DRAM: dram read+write; SM->L2: xbar read+write), errors sim/meas-1:\n";
  std::snprintf(buf, sizeof buf, "  %-4s %-44s %-10s %11s %11s %8s %12s %12s %8s %8s\n", "set",
                "case", "kernel", "meas time", "sim time", "error", "meas DRAM", "sim DRAM",
                "error", "SM->L2");
  t += buf;
  auto rows = [&](const std::vector<KernelComparison>& v, const char* set) {
    for (const KernelComparison& r : v) {
      std::snprintf(buf, sizeof buf,
                    "  %-4s %-44s %-10s %9.3fus %9.3fus %+7.1f%% %12.0f %12.0f %+7.1f%% %+7.2f%%\n",
                    set, cases[r.case_index].label.c_str(), r.kernel.c_str(), r.meas_time_s * 1e6,
                    r.sim_time_s * 1e6, r.time_error() * 100, r.meas_dram, r.sim_dram,
                    r.dram_error() * 100, r.l2_error() * 100);
      t += buf;
    }
  };
  rows(res.fit_rows, "fit");
  rows(res.heldout_rows, "held");
  t += "\nSummary (MAPE = mean |sim/meas - 1|; r = Pearson correlation of log times):\n";
  auto summary = [&](const char* name, const ErrorMetrics& m,
                     const std::vector<KernelComparison>* v) {
    std::snprintf(
        buf, sizeof buf,
        "  %-22s %3zu kernels  time MAPE %6.2f%% worst %6.2f%% r %.4f  DRAM MAPE %6.2f%% worst %6.2f%%  "
        "SM->L2 MAPE %5.2f%%\n",
        name, m.rows, m.time_mape * 100, m.time_max_error * 100, m.time_correlation,
        m.dram_mape * 100, m.dram_max_error * 100, m.l2_mape * 100);
    t += buf;
    if (v && !v->empty()) {
      const KernelComparison& tw = (*v)[m.time_worst];
      const KernelComparison& dw = (*v)[m.dram_worst];
      t += "      worst time: " + cases[tw.case_index].label + " " + tw.kernel + " (line " +
           std::to_string(tw.line) + ")\n      worst DRAM: " + cases[dw.case_index].label + " " +
           dw.kernel + " (line " + std::to_string(dw.line) + ")\n";
    }
  };
  if (!res.evaluated_only) summary("base config (fit set)", res.before_fit, nullptr);
  summary(res.evaluated_only ? "fit set" : "fit", res.fit, &res.fit_rows);
  std::string heldout_name = "held out (";
  if (res.hold_out.param == "seq") {
    heldout_name += "N " + hold_out_flag(res.hold_out).substr(4);
    for (std::size_t at = heldout_name.find(','); at != std::string::npos;
         at = heldout_name.find(',', at + 2)) {
      heldout_name.insert(at + 1, " ");
    }
  } else {
    heldout_name += hold_out_flag(res.hold_out);
  }
  heldout_name += ")";
  summary(heldout_name.c_str(), res.heldout, &res.heldout_rows);
  summary("held out, N <= 1024", res.small_heldout, nullptr);
  if (res.skipped_cases > 0) {
    t += "  " + std::to_string(res.skipped_cases) +
         " profiled cases above the evaluation budget (" +
         format_bytes(Bytes{res.eval_budget_bytes}) + " SM->L2) not simulated\n";
  }
  if (res.unprofiled_cases > 0) {
    t += "  " + std::to_string(res.unprofiled_cases) + " cases without ncu data not compared\n";
  }
  return t;
}

std::string calibrated_extends(const std::string& config, const std::string& output) {
  const std::filesystem::path base =
      std::filesystem::absolute(resolve_config_path(config)).lexically_normal();
  for (const PresetInfo& p : list_presets()) {
    if (std::filesystem::absolute(p.path).lexically_normal() == base) return p.id;
  }
  const std::filesystem::path dir =
      std::filesystem::absolute(output).lexically_normal().parent_path();
  return base.lexically_relative(dir).string();
}

std::string calibration_date_utc() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string calibrate_command_line(const std::string& config, const std::string& measured,
                                   const std::string& output, const std::string& params,
                                   const std::string& fit_budget, const std::string& eval_budget,
                                   const std::string& hold_out, unsigned max_iterations) {
  auto quoted = [](const std::string& s) {
    return s.find(' ') != std::string::npos ? "\"" + s + "\"" : s;
  };
  return "memwall calibrate --config " + quoted(config) + " --measured " + quoted(measured) +
         " -o " + quoted(output) + " --params " + params + " --fit-budget " + quoted(fit_budget) +
         (eval_budget.empty() ? "" : " --eval-budget " + quoted(eval_budget)) +
         (hold_out == "seq=1024,8192" ? "" : " --hold-out " + hold_out) + " --max-iterations " +
         std::to_string(max_iterations);
}

}  // namespace memwall
