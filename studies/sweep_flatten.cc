#include "studies/sweep_flatten.h"

#include <set>
#include <string>
#include <utility>

#include "sim/core/error.h"
#include "sim/core/json.h"

namespace memwall {
namespace {

/// Walks one parsed JSON document and emits its leaves as flat cells.
class Flattener {
 public:
  explicit Flattener(const std::string& what) : m_what(what) {}

  FlatRow run(const JsonValue& document) {
    if (document.type != JsonValue::Type::object) fail(document.offset, "expected a JSON object");
    value(document, "");
    return std::move(m_row);
  }

 private:
  [[noreturn]] void fail(std::uint64_t offset, const std::string& why) const {
    throw UsageError(m_what + ": byte " + std::to_string(offset) + ": " + why);
  }
  static std::string join(const std::string& prefix, const std::string& key) {
    return prefix.empty() ? key : prefix + "." + key;
  }
  void emit(const std::string& key, const JsonValue& v, std::string text) {
    if (!m_keys.insert(key).second) fail(v.offset, "the key \"" + key + "\" occurs twice");
    m_row.emplace_back(key, std::move(text));
  }

  /// Emits `v` at `prefix`; objects and arrays recurse. Numbers keep their text as written.
  void value(const JsonValue& v, const std::string& prefix) {
    switch (v.type) {
      case JsonValue::Type::object: object(v, prefix, /*skip_name=*/false); break;
      case JsonValue::Type::array: array(v, prefix); break;
      case JsonValue::Type::string:
      case JsonValue::Type::number: emit(prefix, v, v.text); break;
      case JsonValue::Type::boolean: emit(prefix, v, v.boolean ? "true" : "false"); break;
      case JsonValue::Type::null: emit(prefix, v, "null"); break;
    }
  }

  void object(const JsonValue& v, const std::string& prefix, bool skip_name) {
    for (const auto& [key, member] : v.members) {
      if (skip_name && key == "name") {
        if (member.type != JsonValue::Type::string) fail(member.offset, "expected '\"'");
        continue;
      }
      value(member, join(prefix, key));
    }
  }

  /// The first string "name" member of object `v`, or nullptr.
  static const std::string* element_name(const JsonValue& v) {
    for (const auto& [key, member] : v.members) {
      if (key == "name" && member.type == JsonValue::Type::string) return &member.text;
    }
    return nullptr;
  }

  void array(const JsonValue& v, const std::string& prefix) {
    for (std::size_t index = 0; index < v.items.size(); ++index) {
      const JsonValue& item = v.items[index];
      const std::string* name = item.type == JsonValue::Type::object ? element_name(item) : nullptr;
      if (name != nullptr) {
        object(item, join(prefix, *name), /*skip_name=*/true);
      } else {
        value(item, join(prefix, std::to_string(index)));
      }
    }
  }

  const std::string& m_what;
  FlatRow m_row;
  std::set<std::string> m_keys;
};

}  // namespace

FlatRow flatten_json(std::string_view json, const std::string& what) {
  return Flattener(what).run(parse_json(json, what));
}

FlatRowWriter::FlatRowWriter(std::string what) : m_what(std::move(what)) {}

void FlatRowWriter::open(std::string_view key, char bracket, Layout) {
  if (!m_levels.empty() && m_levels.back().array) key = {};  // elements are placed at close
  m_levels.push_back(Level{std::string(key), bracket == '[', 0, {}});
}

void FlatRowWriter::close() {
  Level level = std::move(m_levels.back());
  m_levels.pop_back();
  if (m_levels.empty()) {
    // The document: its cells are the row.
    std::set<std::string> keys;
    for (Cell& c : level.cells) {
      if (!keys.insert(c.key).second) {
        throw UsageError(m_what + ": the key \"" + c.key + "\" occurs twice");
      }
      m_row.emplace_back(std::move(c.key), std::move(c.text));
    }
    return;
  }
  Level& parent = m_levels.back();
  std::string prefix = level.key;
  bool skip_name = false;
  if (parent.array) {
    // An element: an object with a string "name" member is placed under that name (without the
    // member), anything else under its index.
    const std::size_t index = parent.elements++;
    prefix = std::to_string(index);
    if (!level.array) {
      for (const Cell& c : level.cells) {
        if (c.key == "name" && c.is_string) {
          prefix = c.text;
          skip_name = true;
          break;
        }
      }
    }
  }
  bool skipped = false;
  for (Cell& c : level.cells) {
    if (skip_name && !skipped && c.key == "name" && c.is_string) {
      skipped = true;
      continue;
    }
    parent.cells.push_back(Cell{prefix + "." + c.key, std::move(c.text), false});
  }
}

void FlatRowWriter::cell(std::string_view key, std::string text, bool is_string) {
  Level& level = m_levels.back();
  std::string name = level.array ? std::to_string(level.elements++) : std::string(key);
  level.cells.push_back(Cell{std::move(name), std::move(text), is_string});
}

void FlatRowWriter::integer(std::string_view key, std::uint64_t v) { cell(key, std::to_string(v)); }
void FlatRowWriter::number(std::string_view key, double v, int significant) {
  cell(key, json_number_text(v, significant));
}
void FlatRowWriter::boolean(std::string_view key, bool v) { cell(key, v ? "true" : "false"); }
void FlatRowWriter::string(std::string_view key, std::string_view v) {
  cell(key, std::string(v), true);
}
void FlatRowWriter::null(std::string_view key) { cell(key, "null"); }
void FlatRowWriter::raw(std::string_view key, std::string_view json) {
  cell(key, std::string(json));
}
void FlatRowWriter::param(std::string_view key, std::string_view v) { cell(key, std::string(v)); }

FlatRow FlatRowWriter::take() {
  FlatRow row = std::move(m_row);
  m_row.clear();
  return row;
}

}  // namespace memwall
