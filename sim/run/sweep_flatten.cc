#include "sim/run/sweep_flatten.h"

#include <set>

#include "sim/core/error.h"

namespace memwall {
namespace {

/// A recursive-descent reader of one JSON document that emits its leaves as flat cells.
class Flattener {
 public:
  Flattener(std::string_view text, const std::string& what) : m_text(text), m_what(what) {}

  FlatRow run() {
    skip_blanks();
    if (peek() != '{') fail("expected a JSON object");
    value("");
    skip_blanks();
    if (m_pos != m_text.size()) fail("trailing characters after the JSON document");
    return std::move(m_row);
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw UsageError(m_what + ": byte " + std::to_string(m_pos) + ": " + why);
  }
  char peek() const { return m_pos < m_text.size() ? m_text[m_pos] : '\0'; }
  void skip_blanks() {
    while (m_pos < m_text.size() &&
           (m_text[m_pos] == ' ' || m_text[m_pos] == '\n' || m_text[m_pos] == '\r' ||
            m_text[m_pos] == '\t')) {
      ++m_pos;
    }
  }
  void expect(char c) {
    skip_blanks();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++m_pos;
  }
  static std::string join(const std::string& prefix, const std::string& key) {
    return prefix.empty() ? key : prefix + "." + key;
  }
  void emit(const std::string& key, std::string value) {
    if (!m_keys.insert(key).second) fail("the key \"" + key + "\" occurs twice");
    m_row.emplace_back(key, std::move(value));
  }

  std::string string_literal() {
    expect('"');
    std::string out;
    while (true) {
      if (m_pos >= m_text.size()) fail("unterminated string");
      const char c = m_text[m_pos++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (m_pos >= m_text.size()) fail("unterminated escape");
      const char e = m_text[m_pos++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          if (m_pos + 4 > m_text.size()) fail("short \\u escape");
          unsigned code = 0;
          for (int i = 0; i < 4; ++i) {
            const char h = m_text[m_pos++];
            const int digit = (h >= '0' && h <= '9')   ? h - '0'
                              : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                              : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                                       : -1;
            if (digit < 0) fail("bad \\u escape");
            code = code * 16 + static_cast<unsigned>(digit);
          }
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          break;
        }
        default: out += e; break;
      }
    }
  }

  /// Reads one value at `prefix`; objects and arrays recurse.
  void value(const std::string& prefix) {
    skip_blanks();
    const char c = peek();
    if (c == '{') {
      object(prefix, /*skip_name=*/false);
    } else if (c == '[') {
      array(prefix);
    } else if (c == '"') {
      emit(prefix, string_literal());
    } else {
      const std::size_t start = m_pos;
      while (m_pos < m_text.size() && m_text[m_pos] != ',' && m_text[m_pos] != '}' &&
             m_text[m_pos] != ']' && m_text[m_pos] != ' ' && m_text[m_pos] != '\n' &&
             m_text[m_pos] != '\r' && m_text[m_pos] != '\t') {
        ++m_pos;
      }
      if (start == m_pos) fail("expected a value");
      emit(prefix, std::string(m_text.substr(start, m_pos - start)));
    }
  }

  void object(const std::string& prefix, bool skip_name) {
    expect('{');
    skip_blanks();
    if (peek() == '}') {
      ++m_pos;
      return;
    }
    while (true) {
      skip_blanks();
      const std::string key = string_literal();
      expect(':');
      if (skip_name && key == "name") {
        skip_blanks();
        string_literal();
      } else {
        value(join(prefix, key));
      }
      skip_blanks();
      if (peek() == ',') {
        ++m_pos;
        continue;
      }
      expect('}');
      return;
    }
  }

  /// If the object starting at m_pos has a string "name" member, returns it (without consuming).
  bool element_name(std::string& name) {
    const std::size_t saved = m_pos;
    bool found = false;
    expect('{');
    int depth = 1;
    while (m_pos < m_text.size() && depth > 0) {
      skip_blanks();
      const char c = peek();
      if (c == '"') {
        const std::string s = string_literal();
        skip_blanks();
        if (depth == 1 && peek() == ':' && s == "name") {
          ++m_pos;
          skip_blanks();
          if (peek() == '"') {
            name = string_literal();
            found = true;
            break;
          }
        }
      } else {
        if (c == '{' || c == '[') ++depth;
        if (c == '}' || c == ']') --depth;
        ++m_pos;
      }
    }
    m_pos = saved;
    return found;
  }

  void array(const std::string& prefix) {
    expect('[');
    skip_blanks();
    if (peek() == ']') {
      ++m_pos;
      return;
    }
    for (std::size_t index = 0;; ++index) {
      skip_blanks();
      std::string name;
      if (peek() == '{' && element_name(name)) {
        object(join(prefix, name), /*skip_name=*/true);
      } else {
        value(join(prefix, std::to_string(index)));
      }
      skip_blanks();
      if (peek() == ',') {
        ++m_pos;
        continue;
      }
      expect(']');
      return;
    }
  }

  std::string_view m_text;
  const std::string& m_what;
  std::size_t m_pos = 0;
  FlatRow m_row;
  std::set<std::string> m_keys;
};

}  // namespace

FlatRow flatten_json(std::string_view json, const std::string& what) {
  return Flattener(json, what).run();
}

}  // namespace memwall
