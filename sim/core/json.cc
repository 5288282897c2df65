#include "sim/core/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "sim/core/error.h"

namespace memwall {
namespace {

constexpr int kMaxDepth = 256;

class Parser {
 public:
  Parser(std::string_view text, const std::string& what) : m_text(text), m_what(what) {}

  JsonValue document() {
    JsonValue v = value(0);
    skip_space();
    if (m_pos != m_text.size()) fail("unexpected content after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& reason) const {
    throw UsageError(m_what + ": byte " + std::to_string(m_pos) + ": " + reason);
  }

  void skip_space() {
    while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t' ||
                                     m_text[m_pos] == '\n' || m_text[m_pos] == '\r')) {
      ++m_pos;
    }
  }

  char peek() {
    skip_space();
    if (m_pos >= m_text.size()) fail("unexpected end of input");
    return m_text[m_pos];
  }

  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++m_pos;
  }

  void literal(std::string_view word) {
    if (m_text.substr(m_pos, word.size()) != word) fail("unknown literal");
    m_pos += word.size();
  }

  JsonValue value(int depth) {
    if (depth > kMaxDepth) fail("nesting deeper than 256");
    const char c = peek();
    JsonValue v;
    v.offset = m_pos;
    if (c == '{') {
      v.type = JsonValue::Type::object;
      ++m_pos;
      if (peek() == '}') {
        ++m_pos;
        return v;
      }
      while (true) {
        if (peek() != '"') fail("expected a member name in quotes");
        std::string key = string_body();
        expect(':');
        v.members.push_back(JsonMember{std::move(key), value(depth + 1)});
        const char next = peek();
        ++m_pos;
        if (next == '}') break;
        if (next != ',') {
          --m_pos;
          fail("expected ',' or '}'");
        }
      }
    } else if (c == '[') {
      v.type = JsonValue::Type::array;
      ++m_pos;
      if (peek() == ']') {
        ++m_pos;
        return v;
      }
      while (true) {
        v.items.push_back(value(depth + 1));
        const char next = peek();
        ++m_pos;
        if (next == ']') break;
        if (next != ',') {
          --m_pos;
          fail("expected ',' or ']'");
        }
      }
    } else if (c == '"') {
      v.type = JsonValue::Type::string;
      v.text = string_body();
    } else if (c == 't') {
      literal("true");
      v.type = JsonValue::Type::boolean;
      v.boolean = true;
    } else if (c == 'f') {
      literal("false");
      v.type = JsonValue::Type::boolean;
    } else if (c == 'n') {
      literal("null");
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      number(v);
    } else {
      fail(std::string("unexpected character '") + c + "'");
    }
    return v;
  }

  void number(JsonValue& v) {
    const std::size_t start = m_pos;
    auto digits = [&] {
      const std::size_t from = m_pos;
      while (m_pos < m_text.size() && m_text[m_pos] >= '0' && m_text[m_pos] <= '9') ++m_pos;
      if (m_pos == from) fail("expected a digit");
    };
    if (m_text[m_pos] == '-') ++m_pos;
    if (m_pos < m_text.size() && m_text[m_pos] == '0') {
      ++m_pos;
    } else {
      digits();
    }
    if (m_pos < m_text.size() && m_text[m_pos] == '.') {
      ++m_pos;
      digits();
    }
    if (m_pos < m_text.size() && (m_text[m_pos] == 'e' || m_text[m_pos] == 'E')) {
      ++m_pos;
      if (m_pos < m_text.size() && (m_text[m_pos] == '+' || m_text[m_pos] == '-')) ++m_pos;
      digits();
    }
    v.type = JsonValue::Type::number;
    v.text = std::string(m_text.substr(start, m_pos - start));
    const auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), v.number);
    if (ec != std::errc() || end != v.text.data() + v.text.size() || !std::isfinite(v.number)) {
      m_pos = start;
      fail("number " + v.text + " is out of range");
    }
  }

  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::uint32_t hex4() {
    if (m_pos + 4 > m_text.size()) fail("truncated \\u escape");
    std::uint32_t cp = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = m_text[m_pos++];
      cp <<= 4;
      if (h >= '0' && h <= '9')
        cp |= static_cast<std::uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f')
        cp |= static_cast<std::uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        cp |= static_cast<std::uint32_t>(h - 'A' + 10);
      else {
        --m_pos;
        fail("bad hex digit in \\u escape");
      }
    }
    return cp;
  }

  /// At an opening quote: returns the unescaped string, positioned after the closing quote.
  std::string string_body() {
    ++m_pos;
    std::string out;
    while (true) {
      if (m_pos >= m_text.size()) fail("unterminated string");
      const char c = m_text[m_pos++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) {
        --m_pos;
        fail("control character in a string");
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (m_pos >= m_text.size()) fail("unterminated string");
      const char e = m_text[m_pos++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          std::uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && m_text.substr(m_pos, 2) == "\\u") {
            m_pos += 2;
            const std::uint32_t low = hex4();
            if (low < 0xDC00 || low >= 0xE000) fail("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default: --m_pos; fail(std::string("unknown escape '\\") + e + "'");
      }
    }
  }

  std::string_view m_text;
  const std::string& m_what;
  std::size_t m_pos = 0;
};

}  // namespace

const JsonValue* JsonValue::get(std::string_view key) const {
  for (const auto& [name, value] : members) {
    if (name == key) return &value;
  }
  return nullptr;
}

JsonValue parse_json(std::string_view text, const std::string& what) {
  return Parser(text, what).document();
}

std::string json_quote(std::string_view text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

}  // namespace memwall
