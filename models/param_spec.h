#pragma once
/// The declaration of one workload parameter: name, flag, type, unit, default, help, bounds, and
/// where its value lives in WorkloadParams. Each plugin lists its parameters as a table of these
/// (models/naive.cc, ...); trace headers, the CLI flags, sweep axes, `memwall workloads` and
/// docs/workloads.md are generated from the tables, and resolution checks the bounds from them.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "models/workload_params.h"

namespace memwall {

/// How a parameter's value is given and stored.
enum class ParamType : std::uint8_t {
  kChoice,  ///< one name of a fixed list (dtype: fp16, fp32), stored as the name's index
  kCount,  ///< a whole number that always has a value (a shape); its default is WorkloadParams'
  kTile,  ///< a whole number below 2^32, empty until resolution fills its default
  kBytes,  ///< a byte count, empty unless given or derived; on the command line a size with unit
  kSwitch,  ///< off or on; listed as 1 when on
};

/// Reads and writes one field of WorkloadParams as an optional whole number.
struct ParamField {
  /// The value; empty when not set (a switch: when off).
  std::optional<std::uint64_t> (*get)(const WorkloadParams&);
  /// Stores a value (callers keep a kTile value below 2^32); empty clears an optional field and
  /// leaves a kCount field unchanged.
  void (*set)(WorkloadParams&, std::optional<std::uint64_t>);
  /// Bytes from the start of WorkloadParams to the field. Fields are declared in the contract's
  /// order, so this orders the parameter catalogue (and with it the flags and the sweep axes).
  std::size_t (*offset)();
};

namespace param_field_detail {

inline std::optional<std::uint64_t> read(std::uint64_t v) { return v; }
inline std::optional<std::uint64_t> read(const std::optional<std::uint32_t>& v) {
  return v ? std::optional<std::uint64_t>(*v) : std::nullopt;
}
inline std::optional<std::uint64_t> read(const std::optional<std::uint64_t>& v) { return v; }
inline std::optional<std::uint64_t> read(bool v) {
  return v ? std::optional<std::uint64_t>(1) : std::nullopt;
}
inline std::optional<std::uint64_t> read(Dtype v) { return static_cast<std::uint64_t>(v); }
inline std::optional<std::uint64_t> read(const std::optional<GemmKernel>& v) {
  return v ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*v)) : std::nullopt;
}

inline void write(std::uint64_t& f, std::optional<std::uint64_t> v) {
  if (v) f = *v;
}
inline void write(std::optional<std::uint32_t>& f, std::optional<std::uint64_t> v) {
  f = v ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(*v)) : std::nullopt;
}
inline void write(std::optional<std::uint64_t>& f, std::optional<std::uint64_t> v) { f = v; }
inline void write(bool& f, std::optional<std::uint64_t> v) { f = v && *v != 0; }
inline void write(Dtype& f, std::optional<std::uint64_t> v) {
  if (v) f = static_cast<Dtype>(*v);
}
inline void write(std::optional<GemmKernel>& f, std::optional<std::uint64_t> v) {
  f = v ? std::optional<GemmKernel>(static_cast<GemmKernel>(*v)) : std::nullopt;
}

}  // namespace param_field_detail

/// The ParamField of WorkloadParams member `Member`, e.g. field_of<&WorkloadParams::block_q>().
template <auto Member>
constexpr ParamField field_of() {
  return {[](const WorkloadParams& p) { return param_field_detail::read(p.*Member); },
          [](WorkloadParams& p, std::optional<std::uint64_t> v) {
            param_field_detail::write(p.*Member, v);
          },
          []() {
            static const WorkloadParams probe{};
            const auto* base = reinterpret_cast<const unsigned char*>(std::addressof(probe));
            const auto* field =
                reinterpret_cast<const unsigned char*>(std::addressof(probe.*Member));
            return static_cast<std::size_t>(field - base);
          }};
}

/// One parameter of a workload, as its plugin declares it. Two plugins that declare the same
/// name share its flag, type and field (one flag means one thing in every command); unit, help,
/// default and bounds are each plugin's own.
struct ParamSpec {
  /// The contract name: trace headers, JSON, CSV columns, sweep axes ("block_q").
  std::string_view name{};
  /// The command-line flag in CLI11 spelling ("--block-q"); empty for a parameter the command
  /// sets itself (smem_limit_bytes, from --config), which resolution keeps for every workload.
  std::string_view flag{};
  ParamType type = ParamType::kCount;
  /// What one unit of the value is ("rows", "tokens", "bytes"); empty for choices and switches.
  std::string_view unit{};
  /// One line, without the default.
  std::string_view help{};
  /// kTile, kBytes: the default that resolution fills in; 0 when none is fixed (default_text
  /// then says how the plugin derives one, or the parameter stays empty).
  std::uint64_t default_value = 0;
  /// A default the plugin derives ("128 for head_dim ≤ 64, else 64"); empty: default_value, or
  /// for kCount, kChoice and kSwitch the WorkloadParams default.
  std::string_view default_text{};
  std::uint64_t min = 0;  ///< smallest accepted value
  std::uint64_t max = 0;  ///< largest accepted value; 0: only the type's own limit
  std::string_view max_reason{};  ///< why `max`, for its error ("K/V blocks in flight")
  std::span<const std::string_view> choices{};  ///< kChoice: the names, by stored index
  /// kTile: a word that may be given instead of a number ("auto"), stored as 0 until the plugin's
  /// resolve replaces it with the value it derives; empty when there is none.
  std::string_view auto_word{};
  ParamField field{};
  /// Whether the resolved value is listed in trace headers; null: whenever it is set.
  bool (*listed)(const WorkloadParams&) = nullptr;
};

/// `spec` with the upper bound `max` and its reason (a shared parameter one workload narrows).
constexpr ParamSpec with_max(ParamSpec spec, std::uint64_t max, std::string_view reason) {
  spec.max = max;
  spec.max_reason = reason;
  return spec;
}

/// The element-type parameter every workload has.
inline constexpr std::string_view kDtypeNames[] = {"fp16", "fp32"};
inline constexpr ParamSpec kDtypeParam{
    .name = "dtype",
    .flag = "--dtype",
    .type = ParamType::kChoice,
    .help =
        "Element type of the tensors: fp16 (2 bytes) or fp32 (4 bytes); attention's "
        "statistics L, l, m stay fp32",
    .choices = kDtypeNames,
    .field = field_of<&WorkloadParams::dtype>(),
};

/// The GEMM-kernel choice of gemm and naive: its default follows the chip (choose_gemm_kernel);
/// listed only when wgmma, so a list without it means mma_sync.
inline constexpr std::string_view kGemmKernelNames[] = {"mma_sync", "wgmma"};
inline constexpr ParamSpec kGemmParam{
    .name = "gemm",
    .flag = "--gemm",
    .type = ParamType::kChoice,
    .help =
        "Kernel of the matrix products: mma_sync (a CTA per output tile, warps issuing "
        "mma.sync) or wgmma (Hopper: TMA loads into a stages-deep ring, wgmma on two consumer "
        "warpgroups, a persistent grid of one CTA per SM, K-tile 64; models/wgmma_gemm.h)",
    .default_text =
        "wgmma on a config with sm.arch >= 90 where that kernel takes the shape (fp16; tiles "
        "of 128 or 256 rows by 64, 128 or 256; K-tile 64), else mma_sync",
    .choices = kGemmKernelNames,
    .field = field_of<&WorkloadParams::gemm>(),
    .listed = [](const WorkloadParams& p) { return p.gemm == GemmKernel::wgmma; },
};

/// The value of `spec` in `p` as text: a choice's name, 1 for a switch that is on, else digits.
/// `p` must have the value set.
std::string param_text(const ParamSpec& spec, const WorkloadParams& p);

/// Whether `spec`'s value in resolved `p` belongs in the parameter list (WorkloadParams::named).
bool param_listed(const ParamSpec& spec, const WorkloadParams& p);

/// Sets `spec`'s value in `p` from text: a choice's name; digits for a count or a tile (below
/// 2^32, or the tile's auto word); 0 (off) or 1 (on) for a switch; digits (bytes) or a size with a unit ("64 KiB") for a byte
/// count. Throws UsageError naming the parameter on a malformed value.
void set_param_text(const ParamSpec& spec, WorkloadParams& p, std::string_view text);

/// Throws UsageError naming the parameter when its value in `p` is set and outside
/// [spec.min, spec.max].
void check_param_bounds(const ParamSpec& spec, const WorkloadParams& p);

/// The default as docs and --help show it: default_text, default_value, or the WorkloadParams
/// default; empty when there is none.
std::string param_default_text(const ParamSpec& spec);

/// The accepted values for docs: "fp16, fp32", "1..32", "≥ 1"; empty when any.
std::string param_bounds_text(const ParamSpec& spec);

/// The type as docs show it: "choice", "count", "tile", "bytes", "switch".
std::string_view param_type_name(ParamType type);

}  // namespace memwall
