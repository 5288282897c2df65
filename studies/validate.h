#pragma once
/// Validation against changes of the real chip: the kernels measured on a GPU that was changed
/// (confined by green contexts to fewer SMs, or with part of its L2 set aside for persisting
/// lines), each case simulated on a config with the matching config change, and the measured and
/// simulated times, slowdowns and (where measured) DRAM bytes side by side. Used by
/// `memwall validate`; every figure is computed from the committed measurements and the config.

#include <optional>
#include <string>
#include <vector>

namespace memwall {

/// Which change of the chip a measurement file holds.
enum class ChipChange {
  kSmCount,  ///< green contexts: column `sms` (the SMs held), `sms_requested` empty without one
  kL2Size,  ///< persisting-L2 carve-out: columns `reserve` and `granted_bytes` (empty without one)
};

/// "sm-count" or "l2-size" (the flag without its dashes, the JSON/CSV `experiment`).
const char* chip_change_name(ChipChange change);

/// One setting of the chip in a measurement file, and the config override that stands for it.
struct ChangeSetting {
  std::string label;  ///< "none", "green 66", "reserve 25%"
  std::string override_text;  ///< "sm.count=66", "l2.size=51118080B": applied to the config
  bool reference = false;  ///< the full chip, against which slowdowns are taken
};

/// The config overrides of a setting's override_text ("l2.size=…B hbm.write_rate=…"), one per
/// space-separated word, as load_config takes them.
std::vector<std::string> setting_overrides(const std::string& override_text);

/// One compared figure set: a kernel of a case, or its total ("total"), at one setting.
struct ValidationRow {
  std::string case_label;  ///< case_label() of the case's parameters
  std::string family;  ///< "flash2", "naive" (totals) or "naive qk" (a kernel of a case of several)
  std::string kernel;  ///< the kernel's name, or "total"
  std::string setting;  ///< ChangeSetting::label
  std::string override_text;
  bool reference = false;
  int line = 0;  ///< line of the measured row in the CSV (0: a total summed from kernels)
  double meas_time_s = 0;  ///< CUDA-event median, s
  double sim_time_s = 0;  ///< simulated, s (the L2 cold at the start, not flushed between kernels)
  double meas_slowdown = 1;  ///< meas_time_s over the same kernel's at the reference setting
  double sim_slowdown = 1;
  std::optional<double>
      meas_dram_bytes;  ///< ncu DRAM read + write (the L2 flushed before each kernel)
  std::optional<double> sim_dram_bytes;  ///< simulated with the L2 flushed between kernels
  std::optional<double> meas_dram_growth;  ///< DRAM bytes over the reference setting's
  std::optional<double> sim_dram_growth;

  double time_error() const { return sim_time_s / meas_time_s - 1; }
  double slowdown_error() const { return sim_slowdown / meas_slowdown - 1; }
};

/// The errors of one family at one setting, over its cases.
struct FamilySummary {
  std::string family;
  std::string setting;
  bool reference = false;
  int cases = 0;
  double time_mape = 0;  ///< mean |time error|
  double time_worst = 0;  ///< the time error of largest magnitude (signed)
  double meas_slowdown_gmean = 1;  ///< geometric mean of the measured slowdowns
  double sim_slowdown_gmean = 1;
  double slowdown_mape = 0;  ///< mean |slowdown error|
  double slowdown_worst = 0;  ///< signed
  int dram_cases = 0;  ///< rows with DRAM bytes measured and simulated
  double dram_mape = 0;
  double dram_worst = 0;
  double meas_dram_growth_gmean = 1;
  double sim_dram_growth_gmean = 1;
};

/// One experiment: a measurement file on a config.
struct ValidationTable {
  ChipChange change = ChipChange::kSmCount;
  std::string measured_path;
  std::string config;  ///< as given (a path or a preset)
  std::vector<ChangeSetting> settings;  ///< the reference first
  int cases = 0;
  int simulations = 0;
  std::vector<ValidationRow> rows;  ///< per case: its total then its kernels, each at every setting
  std::vector<FamilySummary> summary;  ///< summarize(rows)
};

/// What to run.
struct ValidateOptions {
  std::string config = "configs/calibrated/h200.yaml";  ///< a path or a preset
  std::string only_regex;  ///< when set: only the cases whose label it matches (ECMAScript, search)
  std::size_t max_cases = 0;  ///< when > 0: only the first N cases (after only_regex)
  unsigned threads = 1;  ///< simulations in parallel; the result does not depend on it
  /// l2-size: when set, models/cuda/ubench/l2_carveout.cu's output; each carve-out's setting
  /// also scales the HBM's read and write rates by what that carve-out did to its streams.
  std::string carveout_rates;
};

/// Reads `measured_path` (the harness's columns, docs/cuda.md, plus the change's columns; the
/// `total` row of a case is its measured total, else the sum of its kernels), simulates every case
/// at every setting's override of `options.config` — sm-count: `sm.count=S` with S the SMs the
/// green context held; l2-size: `l2.size` = the config's l2.size − granted_bytes, the L2 left to
/// normal accesses — and compares. Throws UsageError naming the file, the line and the column on
/// a missing column or a malformed cell, ConfigError on a bad config or a carve-out that leaves no
/// L2, Interrupted on SIGINT.
ValidationTable run_validation(ChipChange change, const std::string& measured_path,
                               const ValidateOptions& options);

/// The per-family errors over `rows`, families in first-appearance order, settings in the order
/// of `settings`.
std::vector<FamilySummary> summarize(const std::vector<ValidationRow>& rows,
                                     const std::vector<ChangeSetting>& settings);

/// Tables as `--csv` writes them (one header, rows of every table) and reads them back
/// (read_validation_csv: the tables in file order, summaries recomputed; UsageError naming the
/// file, line and column on a malformed cell).
std::string validation_to_csv(const std::vector<ValidationTable>& tables);
std::vector<ValidationTable> read_validation_csv(const std::string& path);

/// `{"experiments": [...]}`: each table's settings, rows and summary, in base units.
std::string validation_to_json(const std::vector<ValidationTable>& tables);

/// The text report of one table: its header, the per-case rows (unless summary_only) and the
/// per-family summary.
std::string validation_to_text(const ValidationTable& table, bool summary_only);

/// The rows of `fresh` whose figures differ from the same row (experiment, case, kernel,
/// setting) of `committed` by more than a relative 1e-6, or that `committed` lacks, one line
/// each ("sm-count: CASE KERNEL SETTING: sim_time_s 1.2e-3 committed 1.1e-3"). Empty when every
/// row agrees. `committed` may hold more cases than `fresh`.
std::vector<std::string> compare_tables(const std::vector<ValidationTable>& fresh,
                                        const std::vector<ValidationTable>& committed);

}  // namespace memwall
