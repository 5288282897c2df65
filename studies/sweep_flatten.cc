#include "studies/sweep_flatten.h"

#include <set>

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

}  // namespace memwall
