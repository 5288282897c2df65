// `memwall trace`: write a model's trace file, count its traffic, dump a file as text;
// `memwall verify`: run a model's kernels on real data and compare with the plain reference.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "models/closed_forms.h"
#include "models/model_source.h"
#include "models/reference.h"
#include "sim/cli/commands.h"
#include "sim/cli/progress_source.h"
#include "sim/cli/workload_options.h"
#include "sim/core/atomic_file.h"
#include "sim/core/error.h"
#include "sim/core/json.h"
#include "sim/core/json_writer.h"
#include "sim/core/memory_budget.h"
#include "sim/core/units.h"
#include "sim/hw/config_loader.h"
#include "studies/workload_config.h"
#include "traces/copy_trace.h"
#include "traces/recorder.h"
#include "traces/trace_dump.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"
#include "traces/traffic_counter.h"

namespace memwall {
namespace {

struct TraceOptions {
  WorkloadParams params;
  std::string config;
  std::string output;
  bool counts = false;
  std::string json;
  std::string max_memory;  ///< --max-memory SIZE; empty: half the machine's memory
};

struct DumpOptions {
  std::string file;
  std::uint64_t limit = 200;
};

struct StatOptions {
  std::string file;
  std::string json;
};

struct VerifyOptions {
  WorkloadParams params;
  std::string config;
  double tolerance = 1e-10;
  std::uint64_t seed = 1;
  bool no_rescale = false;
};

/// The resolved parameters, with the config's smem_per_block when --config is given.
WorkloadParams resolve(const WorkloadParams& params, const std::string& config) {
  if (config.empty()) return resolve_workload_options(params, nullptr);
  const HardwareConfig hw = load_config(config);
  return resolve_workload_options(params, &hw);
}

std::string counts_json(const WorkloadInfo& info, const TraceCounts& c, const Traffic& closed) {
  using Layout = JsonWriter::Layout;
  JsonWriter w;
  w.open("", '{');
  w.string("workload", info.name);
  w.open("params", '{', Layout::kInline);
  for (const auto& [name, value] : info.params) w.string(name, value);
  w.close();
  w.integer("global_read_bytes", c.read_bytes);
  w.integer("global_write_bytes", c.write_bytes);
  w.integer("ctas", c.ctas);
  w.integer("ops", c.ops);
  const auto tensor = [&](std::string_view name, std::uint64_t read, std::uint64_t write) {
    w.open(name, '{', Layout::kInline);
    w.integer("read_bytes", read);
    w.integer("write_bytes", write);
    w.close();
  };
  w.open("by_tensor", '{');
  for (const auto& t : c.by_tensor) tensor(t.tensor, t.read_bytes, t.write_bytes);
  w.close();
  w.open("kernels", '[');
  for (const KernelCount& k : c.kernels) {
    w.open("", '{', Layout::kInline);
    w.string("name", k.name);
    w.integer("ctas", k.ctas);
    w.integer("ops", k.ops);
    w.integer("read_bytes", k.read_bytes);
    w.integer("write_bytes", k.write_bytes);
    w.close();
  }
  w.close();
  w.open("closed_form", '{', Layout::kInline);
  w.integer("global_read_bytes", closed.read_bytes);
  w.integer("global_write_bytes", closed.write_bytes);
  w.open("by_tensor", '{');
  for (const auto& t : closed.by_tensor) tensor(t.tensor, t.read_bytes, t.write_bytes);
  w.close();
  w.close();
  w.boolean("matches_closed_form",
            closed.read_bytes == c.read_bytes && closed.write_bytes == c.write_bytes);
  w.close();
  return w.take();
}

std::string counts_text(const WorkloadInfo& info, const TraceCounts& c, const Traffic& closed) {
  std::ostringstream o;
  o << "workload " << info.name << ":";
  for (const auto& [k, v] : info.params) {
    if (k != "workload") o << " " << k << "=" << v;
  }
  o << "\n";
  char line[256];
  for (const KernelCount& k : c.kernels) {
    std::snprintf(line, sizeof line, "kernel %-12s %10llu CTAs %12llu ops  read %llu  write %llu\n",
                  k.name.c_str(), static_cast<unsigned long long>(k.ctas),
                  static_cast<unsigned long long>(k.ops),
                  static_cast<unsigned long long>(k.read_bytes),
                  static_cast<unsigned long long>(k.write_bytes));
    o << line;
  }
  std::snprintf(line, sizeof line, "%-12s %8s %18s %18s %18s %18s\n", "", "", "read bytes",
                "closed form", "write bytes", "closed form");
  o << line;
  const auto row = [&](const std::string& name, std::uint64_t r, std::uint64_t cr, std::uint64_t w,
                       std::uint64_t cw) {
    std::snprintf(line, sizeof line, "%-12s %8s %18llu %18llu %18llu %18llu\n", name.c_str(),
                  r == cr && w == cw ? "" : "MISMATCH", static_cast<unsigned long long>(r),
                  static_cast<unsigned long long>(cr), static_cast<unsigned long long>(w),
                  static_cast<unsigned long long>(cw));
    o << line;
  };
  for (std::size_t i = 0; i < c.by_tensor.size(); ++i) {
    const TensorTraffic* t = closed.find(c.by_tensor[i].tensor);
    row("tensor " + c.by_tensor[i].tensor, c.by_tensor[i].read_bytes, t ? t->read_bytes : 0,
        c.by_tensor[i].write_bytes, t ? t->write_bytes : 0);
  }
  row("total", c.read_bytes, closed.read_bytes, c.write_bytes, closed.write_bytes);
  o << "total " << format_bytes(Bytes{c.read_bytes}) << " read, "
    << format_bytes(Bytes{c.write_bytes}) << " written, " << c.ctas << " CTAs, " << c.ops
    << " ops\n";
  return o.str();
}

/// The trace commands hold one CTA's ops at a time: at most what --max-memory holds (trace's
/// option; half of this machine's memory by default, as for run and replay). A CTA past it (a persistent kernel's, or
/// one looping over an absurd sequence) is refused with what to change.
std::uint64_t trace_cta_op_limit(const std::string& max_memory = "") {
  const Bytes limit = max_memory_option(max_memory);
  return cta_op_limit(limit.count != 0 ? limit : default_memory_limit());
}

template <class F>
void with_cta_op_limit(F&& f) {
  try {
    f();
  } catch (const CtaOpLimitError& e) {
    throw UsageError("trace: a CTA of more than " + std::to_string(e.limit()) + " ops (" +
                     format_bytes(Bytes{e.limit() * sizeof(Op)}) +
                     "), more than --max-memory holds of one CTA's ops. " +
                     CtaOpLimitError::kAdvice);
  }
}

void trace_command(const TraceOptions& o) {
  if (o.output.empty() && !o.counts) {
    throw UsageError("trace: give -o FILE to write the trace, or --counts to count its traffic");
  }
  if (!o.json.empty() && !o.counts) throw UsageError("trace: --json needs --counts");
  const WorkloadParams p = resolve(o.params, o.config);
  const std::uint64_t op_limit = trace_cta_op_limit(o.max_memory);
  if (!o.output.empty()) {
    const auto start = std::chrono::steady_clock::now();
    const auto source = make_model_source(p);
    source->limit_cta_ops(op_limit);
    TraceWriter writer(o.output);
    ProgressSource shown(*source);
    CopyStats s;
    with_cta_op_limit([&] { s = copy_trace(shown, writer); });
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf(
        "wrote %s: %llu bytes (%s), %llu kernels, %llu CTAs, %llu ops, %.2f bytes/op, "
        "%.2f s\n",
        o.output.c_str(), static_cast<unsigned long long>(writer.bytes_written()),
        format_bytes(Bytes{writer.bytes_written()}).c_str(),
        static_cast<unsigned long long>(s.kernels), static_cast<unsigned long long>(s.ctas),
        static_cast<unsigned long long>(s.ops),
        s.ops ? static_cast<double>(writer.bytes_written()) / static_cast<double>(s.ops) : 0.0,
        secs);
  }
  if (o.counts) {
    const auto source = make_model_source(p);
    source->limit_cta_ops(op_limit);
    ProgressSource shown(*source);
    TraceCounts c;
    with_cta_op_limit([&] { c = count_traffic(shown); });
    const Traffic closed = closed_form_traffic(p);
    std::fputs(counts_text(source->workload(), c, closed).c_str(), stdout);
    if (!o.json.empty()) write_file_atomically(o.json, counts_json(source->workload(), c, closed));
  }
}

void dump_command(const DumpOptions& o) {
  TraceReader reader(o.file);
  reader.limit_cta_ops(trace_cta_op_limit());
  std::cout << "trace " << o.file << " (format version " << reader.version() << ")\n";
  with_cta_op_limit([&] { dump_trace(reader, std::cout, o.limit); });
  std::cout.flush();
}

/// Reads a whole trace file (validating every chunk and op) and prints its traffic and read speed.
void stat_command(const StatOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  TraceReader reader(o.file);
  reader.limit_cta_ops(trace_cta_op_limit());
  ProgressSource shown(reader);
  TraceCounts c;
  with_cta_op_limit([&] { c = count_traffic(shown); });
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::uint64_t size = std::filesystem::file_size(o.file);
  // The closed form of the parameters in the header (a file from another tool may have none).
  Traffic closed{c.read_bytes, c.write_bytes, {}};
  try {
    closed = closed_form_traffic(params_from_named(reader.workload().params));
  } catch (const UsageError& e) {
    std::printf("(no closed form: %s)\n", e.what());
  }
  std::fputs(counts_text(reader.workload(), c, closed).c_str(), stdout);
  std::printf("read %s: %llu bytes, %llu ops in %.2f s (%.1f M ops/s, %.0f MB/s)\n", o.file.c_str(),
              static_cast<unsigned long long>(size), static_cast<unsigned long long>(c.ops), secs,
              secs > 0 ? static_cast<double>(c.ops) / secs / 1e6 : 0.0,
              secs > 0 ? static_cast<double>(size) / secs / 1e6 : 0.0);
  if (!o.json.empty()) {
    write_file_atomically(o.json, counts_json(reader.workload(), c, closed));
  }
}

void verify_command(const VerifyOptions& o, CliContext& ctx) {
  WorkloadParams p = resolve(o.params, o.config);
  p.online_rescale = !o.no_rescale;
  const auto start = std::chrono::steady_clock::now();
  const VerifyResult r = verify_workload(p, o.seed);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string shape;
  for (const auto& [k, v] : p.named()) {
    if (k != "workload") shape += " " + k + "=" + v;
  }
  const bool ok = r.max_abs_error <= o.tolerance;
  std::printf(
      "verify %s%s%s: %s over %llu elements: max abs error %.3e (tolerance %.1e): %s "
      "(%.2f s)\n",
      std::string(to_string(p.workload)).c_str(), shape.c_str(),
      o.no_rescale ? " (no online rescale)" : "", r.output.c_str(),
      static_cast<unsigned long long>(r.elements), r.max_abs_error, o.tolerance,
      ok ? "PASS" : "FAIL", secs);
  if (!ok) ctx.exit_code = kExitFailure;
}

}  // namespace

void register_trace_commands(CLI::App& app, CliContext& ctx) {
  auto topts = std::make_shared<TraceOptions>();
  CLI::App* trace = app.add_subcommand(
      "trace", "Write a workload's trace file, or count its global traffic (--counts)");
  add_workload_options(*trace, topts->params);
  trace
      ->add_option("-c,--config", topts->config,
                   "Hardware config (file or preset): its smem_per_block is flash1's M and the "
                   "per-CTA shared-memory limit (--sram wins for M)")
      ->type_name("FILE");
  trace->add_option("-o,--output", topts->output, "Trace file to write")->type_name("FILE");
  trace->add_flag("--counts", topts->counts,
                  "Print global bytes read/written per kernel and tensor, from the ops, beside the "
                  "closed form");
  trace->add_option("--json", topts->json, "With --counts: also write them as JSON to FILE")
      ->type_name("FILE");
  trace
      ->add_option("--max-memory", topts->max_memory,
                   "Refuse a CTA whose ops (held one CTA at a time) need more memory than SIZE, "
                   "e.g. \"8 GiB\" [default: half the machine's memory]")
      ->type_name("SIZE");
  add_examples(*trace,
               "  memwall trace --workload flash2 --seq 4096 --head-dim 128 --heads 16 -o f2.mwt\n"
               "  memwall trace --workload naive --seq 1024 --counts --json counts.json\n"
               "  memwall trace --workload flash1 --seq 2048 --sram 96KiB --counts\n"
               "  memwall trace --workload gemm --m 4096 --n 4096 --k 4096 --tile-k 64 --counts\n"
               "  memwall trace dump f2.mwt --limit 50\n"
               "  memwall trace stat f2.mwt");
  trace->require_subcommand(0, 1);

  auto dopts = std::make_shared<DumpOptions>();
  CLI::App* dump = trace->add_subcommand("dump", "Print a trace file's header and ops as text");
  dump->add_option("file", dopts->file, "Trace file to read")->required()->type_name("FILE");
  dump->add_option("--limit", dopts->limit, "Print at most K ops (0: all)")
      ->capture_default_str()
      ->type_name("K");
  add_examples(*dump,
               "  memwall trace dump f2.mwt\n  memwall trace dump f2.mwt --limit 0 > f2.txt");
  dump->callback([dopts] { dump_command(*dopts); });
  auto sopts = std::make_shared<StatOptions>();
  CLI::App* stat = trace->add_subcommand(
      "stat",
      "Read a whole trace file, checking every chunk and op, and print its traffic and "
      "the read speed");
  stat->add_option("file", sopts->file, "Trace file to read")->required()->type_name("FILE");
  stat->add_option("--json", sopts->json, "Also write the counts as JSON to FILE")
      ->type_name("FILE");
  add_examples(*stat,
               "  memwall trace stat f2.mwt\n  memwall trace stat f2.mwt --json f2-counts.json");
  stat->callback([sopts] { stat_command(*sopts); });
  trace->callback([dump, stat, topts] {
    if (dump->parsed() || stat->parsed()) return;
    trace_command(*topts);
  });

  auto vopts = std::make_shared<VerifyOptions>();
  CLI::App* verify = app.add_subcommand(
      "verify",
      "Run a workload's kernels on random data in double and compare with the plain "
      "reference softmax(QKᵀ/√d)V (or A·B)");
  add_workload_options(*verify, vopts->params);
  verify
      ->add_option("-c,--config", vopts->config,
                   "Hardware config (file or preset): smem_per_block as flash1's M and the "
                   "per-CTA limit (--sram wins for M)")
      ->type_name("FILE");
  verify->add_option("--tolerance", vopts->tolerance, "Largest max abs error that passes")
      ->capture_default_str()
      ->type_name("X");
  verify->add_option("--seed", vopts->seed, "Seed of the random inputs (uniform in [-1, 1])")
      ->capture_default_str()
      ->type_name("INT");
  verify->add_flag("--no-rescale", vopts->no_rescale,
                   "flash1/flash2: drop the online-softmax rescale (a deliberately wrong variant)");
  add_examples(*verify,
               "  memwall verify --workload flash2 --seq 1000 --head-dim 64 --block-kv 48\n"
               "  memwall verify --workload flash1 --seq 512 --sram 32KiB\n"
               "  memwall verify --workload gemm --m 300 --n 200 --k 100\n"
               "Exits 1 when the error is above --tolerance.");
  verify->callback([vopts, &ctx] { verify_command(*vopts, ctx); });
}

}  // namespace memwall
