#pragma once
/// A small JSON reader: roofline reads the simulator's `--json` report with it, and sweeps flatten
/// each point's report through it. Strict RFC 8259 syntax; errors name the input and the byte
/// offset. And the string quoting the JSON writers share.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memwall {

struct JsonMember;

/// One parsed JSON value. Object members keep the document's order.
struct JsonValue {
  enum class Type : std::uint8_t { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool boolean = false;
  double number = 0;  ///< the value of a number
  std::string text;  ///< a string's unescaped text; a number's text as written
  std::vector<JsonValue> items;  ///< array elements
  std::vector<JsonMember> members;  ///< object members (a vector of a type completed below)
  std::uint64_t offset = 0;  ///< byte offset of the value's first character in the input

  /// The member `key` of an object, or nullptr (also when this is not an object).
  const JsonValue* get(std::string_view key) const;
};

/// One member of a JSON object.
struct JsonMember {
  std::string key;
  JsonValue value;
};

/// Parses `text`. Throws UsageError "WHAT: byte OFFSET: REASON" on malformed input, trailing
/// content, nesting deeper than 256 or a number that is not finite.
JsonValue parse_json(std::string_view text, const std::string& what);

/// `text` as a JSON string literal: quotes around it, '"' and '\\' backslash-escaped, control
/// characters (below 0x20) as \u00XX, every other byte as is.
std::string json_quote(std::string_view text);

}  // namespace memwall
