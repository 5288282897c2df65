#include "studies/measured_join.h"

#include <charconv>
#include <cstdint>
#include <string_view>

#include "sim/core/error.h"

namespace memwall {
namespace {

const std::string* find_named(const FlatRow& named, std::string_view name) {
  for (const auto& [key, value] : named) {
    if (key == name) return value.empty() ? nullptr : &value;
  }
  return nullptr;
}

/// `text` as a canonical whole number, or empty when it is not one.
std::string canonical_whole(const std::string& text) {
  std::uint64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || stop != end) return "";
  return std::to_string(v);
}

}  // namespace

FlatRow measured_variant_cells(const CsvTable& table, std::size_t row, const std::string& where) {
  FlatRow out;
  for (const char* name : kMeasuredVariantColumns) {
    const int c = table.column(name);
    if (c < 0) continue;
    const std::string& cell = table.rows.at(row)[static_cast<std::size_t>(c)];
    if (cell.empty()) continue;
    const bool is_causal = std::string_view(name) == "causal";
    const std::string value = canonical_whole(cell);
    const bool ok = is_causal ? value == "0" || value == "1" : !value.empty() && value != "0";
    if (!ok) {
      throw UsageError(where + ": column " + name + ": expected " +
                       (is_causal ? "0 or 1" : "a positive whole number") + ", got \"" + cell +
                       "\"");
    }
    out.emplace_back(name, value);
  }
  return out;
}

std::vector<std::string> variant_join_values(const FlatRow& named) {
  const auto text = [&](const char* name) {
    const std::string* v = find_named(named, name);
    return v ? *v : std::string();
  };
  const auto unless_default = [](const std::string& value, const std::string& fallback) {
    return value == fallback ? std::string() : value;
  };
  return {unless_default(text("kv_heads"), text("heads")),
          unless_default(text("seq_kv"), text("seq")), unless_default(text("causal"), "0"),
          unless_default(text("splits"), "1"), unless_default(text("gemm"), "mma_sync")};
}

std::string measured_join_columns_text(const CsvTable& table) {
  std::string out;
  for (const char* name : kMeasuredParamColumns)
    out += (out.empty() ? "" : ", ") + std::string(name);
  for (const char* name : kMeasuredVariantColumns) {
    if (table.column(name) >= 0) out += ", " + std::string(name);
  }
  return out;
}

}  // namespace memwall
