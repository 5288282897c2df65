#include "models/param_spec.h"

#include <charconv>
#include <limits>

#include "sim/core/error.h"
#include "sim/core/units.h"

namespace memwall {
namespace {

/// Digits only, as a whole number; UsageError naming the parameter otherwise.
std::uint64_t parse_whole(const ParamSpec& spec, std::string_view text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    throw UsageError(std::string(spec.name) + ": expected a whole number, got \"" +
                     std::string(text) + "\"");
  }
  return v;
}

bool digits_only(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

std::string param_text(const ParamSpec& spec, const WorkloadParams& p) {
  const std::uint64_t v = spec.field.get(p).value_or(0);
  if (spec.type == ParamType::kChoice) return std::string(spec.choices[v]);
  if (v == 0 && !spec.auto_word.empty()) return std::string(spec.auto_word);
  return std::to_string(v);
}

bool param_listed(const ParamSpec& spec, const WorkloadParams& p) {
  if (spec.listed != nullptr) return spec.listed(p) && spec.field.get(p).has_value();
  return spec.field.get(p).has_value();
}

void set_param_text(const ParamSpec& spec, WorkloadParams& p, std::string_view text) {
  switch (spec.type) {
    case ParamType::kChoice: {
      std::string known;
      for (std::size_t i = 0; i < spec.choices.size(); ++i) {
        if (spec.choices[i] == text) {
          spec.field.set(p, i);
          return;
        }
        known += (i ? ", " : "") + std::string(spec.choices[i]);
      }
      throw UsageError("unknown " + std::string(spec.name) + " \"" + std::string(text) +
                       "\" (known: " + known + ")");
    }
    case ParamType::kCount: spec.field.set(p, parse_whole(spec, text)); return;
    case ParamType::kSwitch:
      if (text != "0" && text != "1") {
        throw UsageError(std::string(spec.name) + ": expected 0 (off) or 1 (on), got \"" +
                         std::string(text) + "\"");
      }
      spec.field.set(p, text == "1" ? 1 : 0);
      return;
    case ParamType::kTile: {
      if (!spec.auto_word.empty() && text == spec.auto_word) {
        spec.field.set(p, 0);
        return;
      }
      const std::uint64_t v = parse_whole(spec, text);
      if (v == 0 && !spec.auto_word.empty()) {
        throw UsageError(std::string(spec.name) + " must be > 0 or " + std::string(spec.auto_word) +
                         ", got 0");
      }
      if (v > std::numeric_limits<std::uint32_t>::max()) {
        throw UsageError(std::string(spec.name) + ": " + std::string(text) +
                         " is too large (at most 2^32 - 1)");
      }
      spec.field.set(p, v);
      return;
    }
    case ParamType::kBytes:
      if (digits_only(text)) {
        spec.field.set(p, parse_whole(spec, text));
        return;
      }
      try {
        spec.field.set(p, parse_bytes(text).count);
      } catch (const UnitError& e) {
        throw UsageError(std::string(spec.name) + ": " + e.what());
      }
      return;
  }
}

void check_param_bounds(const ParamSpec& spec, const WorkloadParams& p) {
  const std::optional<std::uint64_t> v = spec.field.get(p);
  if (!v || (*v == 0 && !spec.auto_word.empty())) return;  // the auto word, resolved later
  const std::string name(spec.name);
  if (*v < spec.min) {
    throw UsageError(name +
                     (spec.min == 1 ? " must be > 0" : " must be >= " + std::to_string(spec.min)) +
                     ", got " + std::to_string(*v));
  }
  if (spec.max != 0 && *v > spec.max) {
    throw UsageError(name + " must be <= " + std::to_string(spec.max) + " (" +
                     std::string(spec.max_reason) + "), got " + std::to_string(*v));
  }
}

std::string param_default_text(const ParamSpec& spec) {
  if (!spec.default_text.empty()) return std::string(spec.default_text);
  switch (spec.type) {
    case ParamType::kChoice:
    case ParamType::kCount: return param_text(spec, WorkloadParams{});
    case ParamType::kSwitch: return "off";
    case ParamType::kTile:
    case ParamType::kBytes:
      return spec.default_value != 0 ? std::to_string(spec.default_value) : std::string();
  }
  return "";
}

std::string param_bounds_text(const ParamSpec& spec) {
  if (spec.type == ParamType::kChoice) {
    std::string out;
    for (std::size_t i = 0; i < spec.choices.size(); ++i) {
      out += (i ? ", " : "") + std::string(spec.choices[i]);
    }
    return out;
  }
  const std::string word = spec.auto_word.empty() ? "" : " or " + std::string(spec.auto_word);
  if (spec.max != 0) return std::to_string(spec.min) + ".." + std::to_string(spec.max) + word;
  if (spec.min != 0) return "≥ " + std::to_string(spec.min);
  return "";
}

std::string_view param_type_name(ParamType type) {
  switch (type) {
    case ParamType::kChoice: return "choice";
    case ParamType::kCount: return "count";
    case ParamType::kTile: return "tile";
    case ParamType::kBytes: return "bytes";
    case ParamType::kSwitch: return "switch";
  }
  return "?";
}

}  // namespace memwall
