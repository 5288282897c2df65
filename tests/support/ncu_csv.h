#pragma once
// An Nsight Compute raw page exported as CSV (`ncu -i R --csv --page raw --print-units base`):
// quoted cells, numbers with thousands separators, a units line after the header. For the tests
// that compare a model's bytes with a committed ncu run.

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace memwall::test {

class NcuCsv {
 public:
  explicit NcuCsv(const std::string& path) {
    std::ifstream in(path);
    INFO(path);
    REQUIRE(in);
    std::string line;
    std::getline(in, line);
    const std::vector<std::string> header = split(line);
    std::getline(in, line);
    m_units = split(line);  // empty cells: --print-units base
    for (std::size_t i = 0; i < header.size(); ++i) m_col[header[i]] = i;
    while (std::getline(in, line)) {
      std::vector<std::string> r = split(line);
      if (r.size() == header.size()) m_rows.push_back(std::move(r));
    }
  }

  /// The launches, in profile order.
  const std::vector<std::vector<std::string>>& rows() const { return m_rows; }
  /// Cell `name` of `row` as text.
  const std::string& text(const std::vector<std::string>& row, const std::string& name) const {
    return row.at(m_col.at(name));
  }
  /// Cell `name` of `row`, a byte count (or a plain count) in base units.
  std::uint64_t count(const std::vector<std::string>& row, const std::string& name) const {
    const std::size_t i = m_col.at(name);
    REQUIRE((m_units[i].empty() || m_units[i] == "byte"));
    std::string digits;
    for (char c : row[i]) {
      if (c != ',') digits += c;
    }
    return std::stoull(digits);
  }

 private:
  static std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> cells;
    std::string cell;
    bool quoted = false;
    for (char c : line) {
      if (c == '"')
        quoted = !quoted;
      else if (c == ',' && !quoted)
        cells.push_back(std::exchange(cell, {}));
      else
        cell += c;
    }
    cells.push_back(cell);
    return cells;
  }

  std::map<std::string, std::size_t> m_col;
  std::vector<std::string> m_units;
  std::vector<std::vector<std::string>> m_rows;
};

}  // namespace memwall::test
