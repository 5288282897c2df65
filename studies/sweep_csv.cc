#include "studies/sweep_csv.h"

#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/core/error.h"

namespace memwall {
namespace {

std::uint64_t parse_index(const std::string& text, const std::string& where) {
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    throw UsageError(where + ": expected a whole number, got \"" + text + "\"");
  }
  return v;
}

}  // namespace

int CsvTable::column(std::string_view name) const {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::string csv_escape(std::string_view cell) {
  if (cell.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(cell);
  std::string out = "\"";
  for (const char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i) line += ',';
    line += csv_escape(cells[i]);
  }
  line += '\n';
  return line;
}

std::vector<std::string> csv_split(std::string_view line, const std::string& where) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else if (c != '\r') {
      cells.back() += c;
    }
  }
  if (quoted) throw UsageError(where + ": unterminated quoted cell");
  return cells;
}

CsvTable read_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot open CSV file");
  CsvTable table;
  table.path = path;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string where = path + ":" + std::to_string(line_no);
    if (line.empty() || line == "\r") continue;
    add_csv_line(table, csv_split(line, where), line_no, where);
  }
  if (table.header.empty()) throw UsageError(path + ": empty CSV file (no header)");
  return table;
}

void add_csv_line(CsvTable& table, std::vector<std::string> cells, int line_no,
                  const std::string& where) {
  if (table.header.empty()) {
    table.header = std::move(cells);
    return;
  }
  if (cells.size() != table.header.size()) {
    throw UsageError(where + ": " + std::to_string(cells.size()) + " cells, but the header has " +
                     std::to_string(table.header.size()));
  }
  table.rows.push_back(std::move(cells));
  table.row_lines.push_back(line_no);
}

std::string merge_shards(const std::vector<std::string>& paths) {
  if (paths.empty()) throw UsageError("sweep merge: no shard files given");
  std::vector<std::string> header;
  std::uint64_t total = 0;
  std::string total_where;
  std::string print;  ///< the "sweep" fingerprint of the first row, and where it was read
  std::string print_where;
  // Rows by point index; nothing is allocated per *claimed* point, only per row read.
  std::map<std::uint64_t, std::pair<std::vector<std::string>, std::string>> rows;
  for (const std::string& path : paths) {
    const CsvTable table = read_csv(path);
    if (table.header.size() < 2 || table.header[0] != "point" || table.header[1] != "points") {
      throw UsageError(path +
                       ": not a shard file (its first columns must be \"point\" and "
                       "\"points\"; write it with memwall sweep --shard I/N)");
    }
    if (table.rows.empty()) continue;  // a shard with no points (more shards than points)
    // Shards written since the "sweep" column exists carry the fingerprint of what decides their
    // rows (the resolved config, not its name): every row of every shard must carry the same.
    const bool printed = table.header.size() >= 3 && table.header[2] == "sweep";
    if (header.empty()) {
      header = table.header;
    } else if (table.header != header) {
      throw UsageError(path + ": header differs from " + paths.front() +
                       "'s (shards of different sweeps?)");
    }
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      const auto& cells = table.rows[r];
      const std::string where = path + ":" + std::to_string(table.row_lines[r]);
      const std::uint64_t index = parse_index(cells[0], where + ": point");
      const std::uint64_t count = parse_index(cells[1], where + ": points");
      if (printed) {
        if (print.empty()) {
          print = cells[2];
          print_where = where;
        } else if (cells[2] != print) {
          throw UsageError(where +
                           ": a row of another sweep (its config, workload or axes differ "
                           "from those of " +
                           print_where + ": sweep " + cells[2] + ", not " + print + ")");
        }
      }
      if (total == 0) {
        if (count == 0) throw UsageError(where + ": a sweep of 0 points has no rows");
        total = count;
        total_where = where;
      }
      if (count != total) {
        throw UsageError(where + ": sweep of " + std::to_string(count) + " points, but " +
                         std::to_string(total) + " at " + total_where +
                         " (shards of different sweeps?)");
      }
      if (index >= total) {
        throw UsageError(where + ": point " + std::to_string(index) + " is out of range (0.." +
                         std::to_string(total - 1) + ")");
      }
      const auto [it, fresh] = rows.try_emplace(
          index, std::vector<std::string>(cells.begin() + (printed ? 3 : 2), cells.end()), where);
      if (!fresh) {
        throw UsageError(where + ": point " + std::to_string(index) + " also appears at " +
                         it->second.second);
      }
    }
  }
  if (total == 0) throw UsageError("sweep merge: the shard files hold no rows");
  if (rows.size() != total) {
    // The first index not read: at most rows.size() steps, whatever `total` claims.
    std::uint64_t missing = 0;
    for (const auto& entry : rows) {
      if (entry.first != missing) break;
      ++missing;
    }
    throw UsageError("sweep merge: point " + std::to_string(missing) + " of " +
                     std::to_string(total) +
                     " is in none of the shard files (a shard is missing "
                     "or unfinished; the sweep size comes from " +
                     total_where + ")");
  }
  const std::size_t skip = header.size() >= 3 && header[2] == "sweep" ? 3 : 2;
  std::string out = csv_line(
      std::vector<std::string>(header.begin() + static_cast<std::ptrdiff_t>(skip), header.end()));
  for (const auto& entry : rows) out += csv_line(entry.second.first);
  return out;
}

}  // namespace memwall
