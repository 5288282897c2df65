#pragma once
// The rows of a small comma-separated file of the repository (a committed measurement), for the
// tests that compare a simulation with it: no quoting, the header line skipped, every row of
// `columns` cells (else the test fails where it reads it).

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace memwall::test {

inline std::vector<std::vector<std::string>> csv_rows(const std::string& path,
                                                      std::size_t columns) {
  std::ifstream in(path);
  INFO(path);
  REQUIRE(in);
  std::string line;
  std::getline(in, line);  // header
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::stringstream cells(line);
    std::vector<std::string> row;
    for (std::string cell; std::getline(cells, cell, ',');) row.push_back(cell);
    REQUIRE(row.size() == columns);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace memwall::test
