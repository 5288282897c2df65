#include "studies/measured_csv.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <set>

#include "sim/core/error.h"

namespace memwall {
namespace {

/// Shows a cell in a message: quoted, control characters escaped, cut after 40 characters.
std::string shown(const std::string& cell) {
  std::string out = "\"";
  for (std::size_t i = 0; i < cell.size() && i < 40; ++i) {
    const auto c = static_cast<unsigned char>(cell[i]);
    if (c < 0x20 || c == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (cell.size() > 40) out += "...";
  return out + "\"";
}

/// The header name `name` should have been, when it is a padded or upper-case spelling of one.
std::string normalised(const std::string& name) {
  std::size_t b = 0;
  std::size_t e = name.size();
  while (b < e && std::isspace(static_cast<unsigned char>(name[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(name[e - 1]))) --e;
  std::string out = name.substr(b, e - b);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

CsvTable read_measured_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot open CSV file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CsvTable table;
  table.path = path;
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    const std::string where = path + ":" + std::to_string(line_no);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    for (std::size_t i = 0; i < line.size(); ++i) {
      const auto c = static_cast<unsigned char>(line[i]);
      if (c == '\r') {
        throw UsageError(where +
                         ": a carriage return inside the line (lines must end in \"\\n\" "
                         "or \"\\r\\n\", not \"\\r\" alone)");
      }
      if ((c < 0x20 && c != '\t') || c == 0x7f) {
        throw UsageError(where + ": a control character (byte " + std::to_string(c) +
                         ") at column " + std::to_string(i + 1) + " of the line");
      }
    }
    if (line.empty()) continue;
    std::vector<std::string> cells = csv_split(line, where);
    if (table.header.empty()) {
      std::set<std::string> seen;
      for (std::size_t c = 0; c < cells.size(); ++c) {
        const std::string& name = cells[c];
        const std::string meant = normalised(name);
        if (name.empty())
          throw UsageError(where + ": header cell " + std::to_string(c + 1) + " is empty");
        if (meant != name) {
          throw UsageError(where + ": header cell " + std::to_string(c + 1) + " " + shown(name) +
                           " is not an exact column name (names are lower case, unpadded: did you "
                           "mean \"" +
                           meant + "\"?)");
        }
        if (!seen.insert(name).second) {
          throw UsageError(where + ": column \"" + name + "\" appears twice in the header");
        }
      }
    }
    add_csv_line(table, std::move(cells), line_no, where);
  }
  if (table.header.empty()) throw UsageError(path + ": empty CSV file (no header)");
  return table;
}

std::size_t measured_column(const CsvTable& table, const std::string& name) {
  const int c = table.column(name);
  if (c < 0) throw UsageError(table.path + ":1: missing column \"" + name + "\"");
  return static_cast<std::size_t>(c);
}

std::uint64_t parse_measured_count(const std::string& cell, const std::string& where) {
  std::uint64_t v = 0;
  const char* first = cell.data();
  const char* last = first + cell.size();
  const auto [ptr, ec] = std::from_chars(first, last, v);
  if (!all_digits(cell) || ec != std::errc() || ptr != last) {
    throw UsageError(where + ": expected a byte count (a whole decimal number below 2^64), got " +
                     shown(cell));
  }
  return v;
}

std::optional<std::uint64_t> parse_optional_count(const std::string& cell,
                                                  const std::string& where) {
  if (cell.empty()) return std::nullopt;
  return parse_measured_count(cell, where);
}

double parse_measured_seconds(const std::string& cell, const std::string& where) {
  // Decimal only: digits, one point, an exponent; from_chars (general format) reads no "0x", and
  // the character check keeps out "inf", "nan" and signs.
  bool ok = !cell.empty() && cell.find_first_not_of("0123456789.eE+-") == std::string::npos &&
            cell[0] != '-' && cell[0] != '+';
  double v = 0;
  if (ok) {
    const auto [ptr, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
    ok = ec == std::errc() && ptr == cell.data() + cell.size() && std::isfinite(v) && v >= 0;
  }
  if (!ok) {
    throw UsageError(where +
                     ": expected a time in seconds (a finite, non-negative decimal number), "
                     "got " +
                     shown(cell));
  }
  return v;
}

std::optional<double> parse_optional_seconds(const std::string& cell, const std::string& where) {
  if (cell.empty()) return std::nullopt;
  return parse_measured_seconds(cell, where);
}

}  // namespace memwall
