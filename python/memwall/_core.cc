// memwall._core: the pybind11 binding of the memwall library, wrapped by memwall/__init__.py.
//
// It calls the same library functions the CLI commands call (sim/hw/config_loader.h,
// studies/workload_config.h, studies/sweep_simulate.h, explain/*), so a result is the CLI's, byte
// for byte in its JSON. Every simulation runs on a worker thread without the GIL while the calling
// thread polls Python's signal handlers (PyErr_CheckSignals) every 50 ms: Ctrl-C sets the
// library's interrupt flag, the work unwinds, and the call raises KeyboardInterrupt.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "explain/ledger.h"
#include "explain/race.h"
#include "explain/roofline.h"
#include "explain/traffic.h"
#include "models/closed_forms.h"
#include "models/model_source.h"
#include "models/reference.h"
#include "models/workload_registry.h"
#include "sim/core/atomic_file.h"
#include "sim/core/error.h"
#include "sim/core/interrupt.h"
#include "sim/core/log.h"
#include "sim/core/memory_budget.h"
#include "sim/core/output_guard.h"
#include "sim/engine/simulator.h"
#include "sim/hw/config_loader.h"
#include "sim/hw/config_schema.h"
#include "sim/hw/config_text.h"
#include "sim/hw/topology.h"
#include "sim/report/report_html.h"
#include "sim/report/report_json.h"
#include "sim/report/report_text.h"
#include "sim/report/timeline.h"
#include "studies/calibration.h"
#include "studies/calibration_load.h"
#include "studies/calibration_measured.h"
#include "studies/io_check.h"
#include "studies/measured_csv.h"
#include "studies/sweep_runner.h"
#include "studies/sweep_simulate.h"
#include "studies/sweep_workload.h"
#include "studies/validate.h"
#include "studies/what_if.h"
#include "studies/workload_config.h"
#include "traces/copy_trace.h"
#include "traces/interruptible_source.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace py = pybind11;

namespace memwall {
namespace {

/// How often the calling thread looks for a pending Ctrl-C while the work runs.
constexpr std::chrono::milliseconds kSignalPoll{50};

/// Runs `work` on a worker thread with the GIL released; meanwhile polls Python's signal handlers.
/// A handler that raises (KeyboardInterrupt from Ctrl-C) sets the library's interrupt flag, so the
/// work stops within its polling interval; that exception is then raised here, once the work has
/// unwound and the flag is cleared. Otherwise returns the work's result or rethrows its error.
/// `work` must not touch Python objects.
template <class Work>
auto without_gil(Work&& work) -> decltype(work()) {
  using Result = decltype(work());
  std::optional<Result> result;
  std::exception_ptr error;
  bool raised = false;  // a signal handler raised: its exception is pending on this thread
  {
    py::gil_scoped_release release;
    std::mutex lock;
    std::condition_variable finished;
    bool done = false;
    std::thread worker([&] {
      try {
        result.emplace(work());
      } catch (...) {
        error = std::current_exception();
      }
      const std::lock_guard<std::mutex> guard(lock);
      done = true;
      finished.notify_all();
    });
    std::unique_lock<std::mutex> wait(lock);
    while (!finished.wait_for(wait, kSignalPoll, [&] { return done; })) {
      if (raised) continue;
      wait.unlock();
      {
        py::gil_scoped_acquire acquire;
        raised = PyErr_CheckSignals() != 0;
      }
      if (raised) request_interrupt();
      wait.lock();
    }
    wait.unlock();
    worker.join();
  }
  if (raised) {
    clear_interrupt();
    throw py::error_already_set();
  }
  if (error) std::rethrow_exception(error);
  return std::move(*result);
}

/// A loaded config and how it was asked for (sweeps reload it per point with their overrides).
struct LoadedConfig {
  HardwareConfig hw;
  std::string path_or_preset;  ///< as given to load_config
  std::vector<std::string> overrides;  ///< "key=value", in the order applied
};

/// The base unit of a key's value, as the JSON report and to_yaml write it.
const char* base_unit(KeyType type) {
  switch (type) {
    case KeyType::kSize: return "B";
    case KeyType::kBandwidth: return "B/s";
    case KeyType::kFrequency: return "Hz";
    case KeyType::kDuration: return "ps";
    case KeyType::kInteger:
    case KeyType::kReal:
    case KeyType::kString: return "";
  }
  return "";
}

/// A key's value in base units as a Python number (or str).
py::object base_value(const KeyValue& value) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>)
          return py::str(v);
        else if constexpr (std::is_same_v<T, Bytes>)
          return py::int_(v.count);
        else if constexpr (std::is_same_v<T, Bandwidth>)
          return py::float_(v.bytes_per_second);
        else if constexpr (std::is_same_v<T, Frequency>)
          return py::float_(v.hertz);
        else if constexpr (std::is_same_v<T, Tick>)
          return py::int_(v);
        else if constexpr (std::is_same_v<T, std::uint64_t>)
          return py::int_(v);
        else
          return py::float_(v);
      },
      value);
}

/// The catalogue parameter `name` that has a flag (what the CLI accepts); UsageError otherwise.
const CatalogueParam& flagged_param(const std::string& name) {
  const CatalogueParam* param = find_workload_param(name);
  if (param == nullptr || param->spec->flag.empty()) {
    std::string known;
    for (const CatalogueParam& p : workload_param_catalogue()) {
      if (!p.spec->flag.empty()) known += (known.empty() ? "" : ", ") + std::string(p.spec->name);
    }
    throw UsageError("unknown workload parameter \"" + name + "\" (known: " + known + ")");
  }
  return *param;
}

/// Workload parameters from (name, text) pairs, each set as its flag would set it.
WorkloadParams params_of(const std::vector<std::pair<std::string, std::string>>& named) {
  WorkloadParams p;
  for (const auto& [name, text] : named) set_param_text(*flagged_param(name).spec, p, text);
  return p;
}

/// `workload` with the parameters of `named`, resolved as the CLI resolves them (with `config`'s
/// per-block shared memory when one is given).
WorkloadParams resolved_params(const std::string& workload,
                               const std::vector<std::pair<std::string, std::string>>& named,
                               const LoadedConfig* config) {
  WorkloadParams p = params_of(named);
  p.workload = parse_workload_kind(workload);
  return resolve_workload_options(p, config ? &config->hw : nullptr);
}

py::dict param_dict(const ParamSpec& spec) {
  py::dict d;
  d["name"] = std::string(spec.name);
  d["flag"] = std::string(spec.flag);
  d["type"] = std::string(param_type_name(spec.type));
  d["unit"] = std::string(spec.unit);
  d["default"] = param_default_text(spec);
  d["values"] = param_bounds_text(spec);
  d["help"] = std::string(spec.help);
  return d;
}

/// Raises the exception class `name` of memwall._errors with `args`.
void raise_memwall(const char* name, const py::tuple& args) {
  const py::object type = py::module_::import("memwall._errors").attr(name);
  PyErr_SetObject(type.ptr(), type(*args).ptr());
}

void translate_errors(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const Interrupted& e) {
    PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
  } catch (const ConfigError& e) {
    raise_memwall("ConfigError", py::make_tuple(e.what(), e.pos().file, e.pos().line,
                                                e.pos().column, e.key_path(), e.reason()));
  } catch (const UsageError& e) {
    raise_memwall("UsageError", py::make_tuple(e.what(), e.exit_code()));
  } catch (const TraceError& e) {
    raise_memwall("TraceError", py::make_tuple(e.what(), e.exit_code()));
  } catch (const Error& e) {
    raise_memwall("Error", py::make_tuple(e.what(), e.exit_code()));
  }
}

}  // namespace
}  // namespace memwall

PYBIND11_MODULE(_core, m) {
  // As the CLI's default (-v warn): the library's info lines ("io: 3 points on 1 thread") are
  // for a terminal's -v info, not for every notebook cell.
  memwall::set_log_level("warn");
  using namespace memwall;
  m.doc() = "The C++ core of memwall (use the memwall package, which wraps it)";
  m.attr("version") = MEMWALL_VERSION;
  py::register_exception_translator(&translate_errors);

  py::class_<LoadedConfig>(m, "Config")
      .def_property_readonly("name", [](const LoadedConfig& c) { return c.hw.name; })
      .def_property_readonly("description", [](const LoadedConfig& c) { return c.hw.description; })
      .def_property_readonly("source_file", [](const LoadedConfig& c) { return c.hw.source_file; })
      .def_readonly("path_or_preset", &LoadedConfig::path_or_preset)
      .def_readonly("overrides", &LoadedConfig::overrides)
      .def("values",
           [](const LoadedConfig& c) {
             py::list out;
             for (const KeyDecl& key : config_schema()) {
               if (key.fetch == nullptr) continue;
               const KeyValue v = key.fetch(c.hw);
               out.append(py::make_tuple(
                   std::string(key.path), std::string(key_type_name(key.type)), base_value(v),
                   base_unit(key.type), format_key_value(key, v, c.hw.sm.clock)));
             }
             return out;
           })
      .def("derived",
           [](const LoadedConfig& c) {
             py::list out;
             for (const DerivedValue& d : derived_values(c.hw)) {
               out.append(py::make_tuple(d.name, d.value, d.unit));
             }
             return out;
           })
      .def("show", [](const LoadedConfig& c) { return config_show_text(c.hw); })
      .def("to_yaml", [](const LoadedConfig& c) { return config_to_yaml(c.hw); })
      // `memwall config dot`: collapse "auto" (one node per group above 16 SMs), "yes" or "no".
      .def("dot", [](const LoadedConfig& c, const std::string& collapse) {
        if (collapse != "auto" && collapse != "yes" && collapse != "no") {
          throw UsageError("dot: collapse must be auto, yes or no, got \"" + collapse + "\"");
        }
        const Topology topology(c.hw);
        const bool merged = collapse == "yes" || (collapse == "auto" && c.hw.sm.count > 16);
        return merged ? topology.to_dot_collapsed() : topology.to_dot();
      });
  m.def("config_reference", [] { return config_reference_markdown(); });

  m.def("presets", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const PresetInfo& p : list_presets()) out.emplace_back(p.id, p.path);
    return out;
  });

  m.def("load_config",
        [](const std::string& path_or_preset, const std::vector<std::string>& overrides) {
          return LoadedConfig{load_config(path_or_preset, overrides), path_or_preset, overrides};
        });

  m.def("workloads", [] {
    py::list out;
    for (const WorkloadPlugin* plugin : workload_plugins()) {
      py::dict w;
      w["name"] = std::string(plugin->name());
      w["summary"] = std::string(plugin->summary());
      py::list params;
      for (const ParamSpec& spec : plugin->params()) params.append(param_dict(spec));
      w["params"] = params;
      out.append(w);
    }
    return out;
  });

  // Every parameter a workload keyword argument may name (those with a CLI flag), in the
  // catalogue's order, with its type.
  m.def("parameters", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const CatalogueParam& p : workload_param_catalogue()) {
      if (!p.spec->flag.empty()) {
        out.emplace_back(std::string(p.spec->name), std::string(param_type_name(p.spec->type)));
      }
    }
    return out;
  });

  // Simulates each workload in turn: per run its JSON report and text summary, then the text and
  // the JSON of them all (as `memwall run --workload A,B` prints and writes with --json).
  m.def("run", [](const LoadedConfig& config, const std::vector<std::string>& workloads,
                  const std::vector<std::pair<std::string, std::string>>& named, bool flush_l2,
                  const std::string& what_if, unsigned jobs, const std::string& timeline,
                  std::uint64_t timeline_budget, const std::string& html,
                  const std::string& max_memory) {
    if (jobs < 1) throw UsageError("run: jobs must be at least 1");
    const Bytes memory_limit = memory_limit_option(max_memory, "max_memory");
    if (!timeline.empty() && workloads.size() > 1) {
      throw UsageError("timeline takes a single workload");
    }
    // As the CLI: no output overwrites the config it was made from, nor another output.
    refuse_clobbering({{"timeline", timeline}, {"html", html}},
                      {{"config", config.hw.source_file}});
    if (!what_if.empty())
      (void)parse_what_ifs(what_if, config.hw, Bytes{1});  // names, before simulating
    std::vector<WorkloadParams> points;
    for (const std::string& name : workloads) {
      WorkloadParams p = params_of(named);
      p.workload = parse_workload_kind(name);
      points.push_back(p);
    }
    return without_gil([&] {
      SimOptions sim;
      sim.flush_l2_between_kernels = flush_l2;
      sim.max_memory = memory_limit;
      std::vector<RunResult> results;
      std::vector<std::pair<std::string, std::string>> reports;
      const RunProvenance provenance =
          make_provenance(config.path_or_preset, config.overrides, config.hw);
      for (const WorkloadParams& p : points) {
        if (!timeline.empty()) {  // as `memwall run --timeline FILE --timeline-budget N`
          Timeline sink(timeline, timeline_budget, timeline_budget);
          const auto source = make_model_source(resolve_workload_options(p, &config.hw));
          InterruptibleSource polled(*source);
          results.push_back(simulate(config.hw, polled, sim, &sink));
          sink.finish();
        } else {
          results.push_back(simulate_workload(config.hw, p, sim));
        }
        reports.emplace_back(run_to_json(results.back(), provenance),
                             format_run_report(results.back(), provenance));
      }
      const bool one = results.size() == 1;
      if (!html.empty()) {  // as `memwall run --html FILE`
        write_file_atomically(
            html, runs_to_html(results, config.hw, {config.hw.source_file, config.overrides}));
      }
      std::string what_if_text, what_if_json;
      if (!what_if.empty()) {
        const auto tables = what_if_tables(what_if, config.path_or_preset, config.overrides,
                                           results, flush_l2, jobs, false);
        what_if_text = what_if_tables_text(results, tables);
        what_if_json = what_if_tables_json(results, tables);
      }
      return std::make_tuple(
          reports, one ? reports[0].second : format_comparison(results, provenance),
          one ? reports[0].first : runs_to_json(results, provenance), what_if_text, what_if_json);
    });
  });

  // The sweep's rows as the CSV's cells: (header, rows).
  m.def("sweep_axes", [] {
    std::vector<std::string> names;
    for (const WorkloadAxis& axis : workload_axes()) names.push_back(axis.name);
    return names;
  });
  m.def("sweep", [](const LoadedConfig& config, const std::vector<std::string>& axis_values,
                    const std::vector<std::string>& sets, unsigned jobs, bool flush_l2) {
    if (jobs < 1) throw UsageError("sweep: jobs must be at least 1");
    const SweepPlan plan = workload_sweep_plan(axis_values, sets);
    const PointRunner runner =
        simulator_point_runner(config.path_or_preset, flush_l2, config.overrides);
    return without_gil([&] {
      std::vector<std::uint64_t> indices(plan.count());
      for (std::uint64_t i = 0; i < plan.count(); ++i) indices[i] = i;
      const SweepTable table = sweep_table(plan, indices, run_points(plan, indices, runner, jobs));
      return std::make_pair(table.header, table.rows);
    });
  });

  // The closed form of one workload: (resolved parameters, read, write, per tensor).
  m.def(
      "closed_form",
      [](const std::string& workload, const std::vector<std::pair<std::string, std::string>>& named,
         const LoadedConfig* config) {
        const WorkloadParams resolved = resolved_params(workload, named, config);
        const Traffic t = closed_form_traffic(resolved);
        std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> tensors;
        for (const TensorTraffic& x : t.by_tensor)
          tensors.emplace_back(x.tensor, x.read_bytes, x.write_bytes);
        return py::make_tuple(resolved.named(), t.read_bytes, t.write_bytes, tensors);
      },
      py::arg("workload"), py::arg("named"), py::arg("config").none(true));

  // `memwall trace -o PATH`: (resolved parameters, bytes written, kernels, CTAs, ops).
  m.def(
      "write_trace",
      [](const std::string& workload, const std::vector<std::pair<std::string, std::string>>& named,
         const LoadedConfig* config, const std::string& path) {
        const WorkloadParams resolved = resolved_params(workload, named, config);
        refuse_clobbering({{"path", path}},
                          {{"config", config ? config->hw.source_file : std::string()}});
        return without_gil([&] {
          const auto source = make_model_source(resolved);
          TraceWriter writer(path);
          const CopyStats s = copy_trace(*source, writer);
          return std::make_tuple(resolved.named(), writer.bytes_written(), s.kernels, s.ctas,
                                 s.ops);
        });
      },
      py::arg("workload"), py::arg("named"), py::arg("config").none(true), py::arg("path"));

  // `memwall replay PATH`: (JSON report, text summary).
  m.def("replay", [](const LoadedConfig& config, const std::string& path, bool flush_l2,
                     const std::string& max_memory) {
    const Bytes memory_limit = memory_limit_option(max_memory, "max_memory");
    return without_gil([&] {
      TraceReader reader(path);
      SimOptions sim;
      sim.flush_l2_between_kernels = flush_l2;
      sim.max_memory = memory_limit;
      const RunResult r = simulate(config.hw, reader, sim);
      const RunProvenance provenance =
          make_provenance(config.path_or_preset, config.overrides, config.hw);
      return std::make_pair(run_to_json(r, provenance), format_run_report(r, provenance));
    });
  });

  // `memwall verify`: (resolved parameters, tensors compared, elements, max abs error).
  m.def(
      "verify",
      [](const std::string& workload, const std::vector<std::pair<std::string, std::string>>& named,
         const LoadedConfig* config, std::uint64_t seed, bool online_rescale) {
        WorkloadParams resolved = resolved_params(workload, named, config);
        resolved.online_rescale = online_rescale;
        const VerifyResult r = without_gil([&] { return verify_workload(resolved, seed); });
        return py::make_tuple(resolved.named(), r.output, r.elements, r.max_abs_error);
      },
      py::arg("workload"), py::arg("named"), py::arg("config").none(true), py::arg("seed"),
      py::arg("online_rescale"));

  // `memwall io`: (JSON, text) of the points the axis values make (one workload).
  m.def("io", [](const LoadedConfig& config, const std::vector<std::string>& axis_values,
                 bool ideal, bool flush_l2, unsigned jobs, const std::string& measured) {
    if (jobs < 1) throw UsageError("io: jobs must be at least 1");
    const SweepPlan plan = workload_sweep_plan(axis_values, {});
    IoOptions options;
    options.config = config.path_or_preset;
    options.sets = config.overrides;
    options.ideal = ideal;
    options.flush_l2 = flush_l2;
    options.threads = jobs;
    std::unique_ptr<CsvTable> table;
    if (!measured.empty()) table = std::make_unique<CsvTable>(read_measured_csv(measured));
    return without_gil([&] {
      const IoReport report = run_io(plan, options, table.get());
      return std::make_pair(io_to_json(report), io_to_text(report));
    });
  });

  // `memwall calibrate`: mode "load_check", "evaluate" or "fit"; (load check text, load-check
  // failures, result text, result JSON, calibrated YAML) — the last three "" where the mode makes
  // none; with `output` the YAML is also written there (atomically), as -o writes it.
  m.def(
      "calibrate",
      [](const std::string& config, const std::string& measured, const std::string& mode,
         const std::string& params, const std::string& fit_budget, const std::string& eval_budget,
         const std::string& hold_out, unsigned max_iterations, unsigned jobs,
         const std::string& output) {
        if (mode != "load_check" && mode != "evaluate" && mode != "fit") {
          throw UsageError("calibrate: mode must be load_check, evaluate or fit, got \"" + mode +
                           "\"");
        }
        if (jobs < 1) throw UsageError("calibrate: jobs must be at least 1");
        refuse_clobbering({{"output", output}},
                          {{"config", resolve_config_path(config)}, {"measured", measured}});
        CalibrationOptions options;
        std::optional<HardwareConfig> base;
        if (mode != "load_check") {
          options.params = parse_fit_params(params);
          try {
            options.fit_budget_bytes = parse_bytes(fit_budget).count;
            if (!eval_budget.empty()) options.eval_budget_bytes = parse_bytes(eval_budget).count;
          } catch (const UnitError& e) {
            throw UsageError("calibrate: fit_budget/eval_budget: " + std::string(e.what()));
          }
          options.hold_out = parse_hold_out(hold_out);
          options.max_iterations = max_iterations;
          options.threads = jobs;
          base = load_config(config);
        }
        return without_gil([&] {
          const std::vector<MeasuredCase> cases = read_measured_cases(measured);
          const LoadCheck load = run_load_check(cases, 0.02, jobs);
          std::string text, json, yaml;
          if (mode == "evaluate") {
            const CalibrationResult r = evaluate_config(*base, cases, measured, options);
            text = calibration_to_text(r, cases);
            json = calibration_to_json(r, cases);
          } else if (mode == "fit") {
            const CalibrationResult r = run_calibration(*base, cases, measured, options);
            text = calibration_to_text(r, cases);
            json = calibration_to_json(r, cases);
            const std::string out = output.empty() ? "calibrated.yaml" : output;
            yaml = calibrated_yaml(r, calibrated_extends(config, out), calibration_date_utc(),
                                   calibrate_command_line(config, measured, out, params, fit_budget,
                                                          eval_budget, hold_out, max_iterations));
            if (!output.empty()) write_file_atomically(output, yaml);
          }
          return std::make_tuple(load_check_to_text(load, cases, false), load.failures(), text,
                                 json, yaml);
        });
      },
      py::arg("config"), py::arg("measured"), py::arg("mode"), py::arg("params"),
      py::arg("fit_budget"), py::arg("eval_budget"), py::arg("hold_out"), py::arg("max_iterations"),
      py::arg("jobs"), py::arg("output"));

  // `memwall validate`: (JSON, text, CSV) of the measurements simulated (sm_count, l2_size: paths
  // or "") or of a table written by --csv, summarized again (table).
  m.def("validate", [](const std::string& sm_count, const std::string& l2_size,
                       const std::string& table, const std::string& config, const std::string& only,
                       std::size_t cases, unsigned jobs, bool summary) {
    if (jobs < 1) throw UsageError("validate: jobs must be at least 1");
    const bool simulate_some = !sm_count.empty() || !l2_size.empty();
    if (simulate_some == !table.empty()) {
      throw UsageError(
          "validate: give sm_count and/or l2_size (measurements to simulate), or "
          "table (a table written by --csv, summarized again)");
    }
    return without_gil([&] {
      std::vector<ValidationTable> tables;
      if (simulate_some) {
        ValidateOptions o;
        o.config = config;
        o.only_regex = only;
        o.max_cases = cases;
        o.threads = jobs;
        if (!sm_count.empty()) tables.push_back(run_validation(ChipChange::kSmCount, sm_count, o));
        if (!l2_size.empty()) tables.push_back(run_validation(ChipChange::kL2Size, l2_size, o));
      } else {
        tables = read_validation_csv(table);
      }
      std::string text;
      for (std::size_t i = 0; i < tables.size(); ++i) {
        text += (i ? "\n" : "") + validation_to_text(tables[i], summary);
      }
      return std::make_tuple(validation_to_json(tables), text, validation_to_csv(tables));
    });
  });

  // `memwall ledger`: (the ledger's fields, its steps, the text).
  m.def("ledger", [](std::uint64_t row_len, std::uint64_t tile, std::uint64_t seed, bool late_max) {
    explain::LedgerOptions o;
    o.row_len = row_len;
    o.tile = tile;
    o.seed = seed;
    o.late_max = late_max;
    const explain::LedgerResult r = without_gil([&] { return explain::run_ledger(o); });
    py::list steps;
    for (const explain::LedgerStep& s : r.steps) {
      py::dict d;
      d["tile_index"] = s.tile_index;
      d["begin"] = s.begin;
      d["end"] = s.end;
      d["tile_max"] = s.tile_max;
      d["m_old"] = s.m_old;
      d["m_new"] = s.m_new;
      d["rescale"] = s.rescale;
      d["l"] = s.l;
      d["l_no_rescale"] = s.l_no_rescale;
      steps.append(d);
    }
    py::dict out;
    out["argmax"] = r.argmax;
    out["reference_max"] = r.reference_max;
    out["reference_sum"] = r.reference_sum;
    out["reference_output"] = r.reference_output;
    out["online_output"] = r.online_output;
    out["no_rescale_output"] = r.no_rescale_output;
    out["online_error"] = r.online_error;
    out["no_rescale_error"] = r.no_rescale_error;
    return py::make_tuple(out, steps, explain::format_ledger(r));
  });

  // `memwall race`: (rows, text).
  m.def("race", [](const std::vector<std::uint64_t>& seqs, std::uint64_t head_dim,
                   std::uint64_t tile, std::uint64_t repeat, std::uint64_t seed) {
    explain::RaceOptions o;
    o.seqs = seqs;
    o.head_dim = head_dim;
    o.tile = tile;
    o.repeat = repeat;
    o.seed = seed;
    const std::vector<explain::RaceRow> rows = without_gil([&] { return explain::run_race(o); });
    py::list out;
    for (const explain::RaceRow& r : rows) {
      py::dict d;
      d["seq"] = r.seq;
      d["naive_seconds"] = r.naive_seconds;
      d["tiled_seconds"] = r.tiled_seconds;
      d["naive_peak_bytes"] = r.naive_memory.peak_bytes;
      d["tiled_peak_bytes"] = r.tiled_memory.peak_bytes;
      d["naive_allocated_bytes"] = r.naive_memory.total_bytes;
      d["tiled_allocated_bytes"] = r.tiled_memory.total_bytes;
      d["max_abs_diff"] = r.max_abs_diff;
      d["agree"] = r.agree;
      out.append(d);
    }
    return py::make_tuple(out, explain::format_race(o, rows));
  });

  // `memwall traffic`: (JSON, text).
  m.def(
      "traffic",
      [](const std::vector<std::pair<std::string, std::string>>& named,
         const LoadedConfig* config) {
        const explain::TrafficTable table =
            explain::compute_traffic(params_of(named), config ? &config->hw : nullptr);
        return std::make_pair(explain::traffic_json(table), explain::format_traffic(table));
      },
      py::arg("named"), py::arg("config").none(true));

  // `memwall roofline`: (JSON, text); `reports` are JSON reports (a run or an array of runs).
  m.def("roofline", [](const LoadedConfig& config, const std::vector<double>& intensities,
                       const std::vector<std::string>& reports) {
    const explain::RooflineChip chip = explain::roofline_chip(config.hw);
    std::vector<explain::KernelPoint> kernels;
    for (std::size_t i = 0; i < reports.size(); ++i) {
      for (explain::KernelPoint& k :
           explain::read_report_kernels(reports[i], "report " + std::to_string(i), chip)) {
        kernels.push_back(std::move(k));
      }
    }
    const explain::Roofline roofline = explain::make_roofline(chip, intensities, kernels);
    return std::make_pair(explain::roofline_json(roofline), explain::format_roofline(roofline));
  });
}
