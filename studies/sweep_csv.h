#pragma once
/// The CSV dialect of sweeps (RFC 4180): comma-separated, "\n" line ends, a cell quoted only when
/// it holds a comma, a quote or a line break (quotes doubled inside). And the merge of shard files.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memwall {

/// A parsed CSV file: its header and its rows (each with as many cells as the header).
struct CsvTable {
  std::string path;  ///< for messages
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> row_lines;  ///< 1-based line of each row in the file

  /// The column index of `name`, or -1.
  int column(std::string_view name) const;
};

/// One cell, quoted if needed.
std::string csv_escape(std::string_view cell);
/// Cells joined by commas, escaped, ending in "\n".
std::string csv_line(const std::vector<std::string>& cells);
/// Splits one line (without its "\n") into cells. Throws UsageError naming `where` on an
/// unterminated quote.
std::vector<std::string> csv_split(std::string_view line, const std::string& where);

/// Adds the cells of line `line_no` to `table`: as its header when it has none yet, else as a row,
/// which must have as many cells as the header (UsageError naming `where` otherwise).
void add_csv_line(CsvTable& table, std::vector<std::string> cells, int line_no,
                  const std::string& where);

/// Reads a CSV file whose cells hold no line breaks. Throws UsageError naming the file and the line
/// when it cannot be read, is empty, or a row's cell count differs from the header's.
CsvTable read_csv(const std::string& path);

/// Joins shard files written by `memwall sweep --shard I/N` (first columns `point` and `points`)
/// into the CSV one unsharded run writes: the same header without those two columns, rows in point
/// order. Throws UsageError when the headers differ, a shard disagrees on the point count or (third
/// column "sweep", written since it exists) on the fingerprint of the sweep, or the indices do not
/// cover every point exactly once (naming the file, the line and the point).
std::string merge_shards(const std::vector<std::string>& paths);

}  // namespace memwall
