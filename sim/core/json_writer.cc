#include "sim/core/json_writer.h"

#include <cmath>
#include <cstdio>

#include "sim/core/json.h"

namespace memwall {

std::string json_number_text(double v, int significant) {
  if (!std::isfinite(v)) return "null";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", significant, v);
  return buf;
}

void JsonWriter::newline() {
  m_out += '\n';
  m_out.append(2 * m_levels.size(), ' ');
}

void JsonWriter::prefix(std::string_view key) {
  if (!m_levels.empty()) {
    Level& level = m_levels.back();
    if (level.inline_members) {
      if (!level.first) m_out += ", ";
    } else {
      if (!level.first) m_out += ',';
      newline();
    }
    level.first = false;
  }
  if (!key.empty()) {
    m_out += json_quote(key);
    m_out += ": ";
  }
}

void JsonWriter::open(std::string_view key, char bracket, Layout layout) {
  prefix(key);
  m_out += bracket;
  const bool inline_members =
      layout == Layout::kInline || (!m_levels.empty() && m_levels.back().inline_members);
  m_levels.push_back({bracket, inline_members});
}

void JsonWriter::close() {
  const Level level = m_levels.back();
  m_levels.pop_back();
  if (!level.first && !level.inline_members) newline();
  m_out += level.bracket == '{' ? '}' : ']';
}

void JsonWriter::integer(std::string_view key, std::uint64_t v) {
  prefix(key);
  m_out += std::to_string(v);
}

void JsonWriter::number(std::string_view key, double v, int significant) {
  prefix(key);
  m_out += json_number_text(v, significant);
}

void JsonWriter::boolean(std::string_view key, bool v) {
  prefix(key);
  m_out += v ? "true" : "false";
}

void JsonWriter::string(std::string_view key, std::string_view v) {
  prefix(key);
  m_out += json_quote(v);
}

void JsonWriter::null(std::string_view key) {
  prefix(key);
  m_out += "null";
}

void JsonWriter::raw(std::string_view key, std::string_view json) {
  prefix(key);
  m_out += json;
}

void JsonWriter::param(std::string_view key, std::string_view v) {
  const bool digits = !v.empty() && v.size() < 19 &&
                      v.find_first_not_of("0123456789") == std::string_view::npos &&
                      (v.size() == 1 || v[0] != '0');
  prefix(key);
  if (digits) {
    m_out += v;
  } else {
    m_out += json_quote(v);
  }
}

std::string JsonWriter::take() {
  std::string out = std::move(m_out) + "\n";
  m_out.clear();
  m_levels.clear();
  return out;
}

}  // namespace memwall
