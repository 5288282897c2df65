#pragma once
/// Flattens a JSON report into named cells, so that every figure becomes one CSV column.
///
/// Object members become "parent.child"; an array of objects that each have a string "name"
/// member becomes "parent.<name>.child" (the "name" member itself is dropped), so per-kernel
/// figures read "kernels.flash2_fwd.time_s"; any other array element becomes "parent.<index>".
/// Numbers keep their JSON text exactly (so a deterministic report gives deterministic cells);
/// strings are unescaped; true/false/null stay as written. Order is the document's order.

#include <string>
#include <string_view>
#include <vector>

#include "sim/core/json_writer.h"
#include "studies/sweep_plan.h"

namespace memwall {

/// Flattens `json` (an object), read with parse_json (sim/core/json.h). Throws UsageError naming
/// `what` and the byte offset on malformed JSON, a document that is not an object, or a repeated
/// flattened key.
FlatRow flatten_json(std::string_view json, const std::string& what);

/// The same cells written directly, without JSON text: a document written to it member by member
/// (e.g. write_run_document) gives the cells flatten_json gives of that document's JSON text,
/// in the same order and with the same number texts. take() throws UsageError naming `what` on a
/// repeated flattened key.
class FlatRowWriter final : public DocumentWriter {
 public:
  explicit FlatRowWriter(std::string what);

  void open(std::string_view key, char bracket, Layout layout = Layout::kLines) override;
  void close() override;
  void integer(std::string_view key, std::uint64_t v) override;
  void number(std::string_view key, double v, int significant = 9) override;
  void boolean(std::string_view key, bool v) override;
  void string(std::string_view key, std::string_view v) override;
  void null(std::string_view key) override;
  void raw(std::string_view key, std::string_view json) override;
  void param(std::string_view key, std::string_view v) override;

  /// The cells of the closed document; the writer is empty afterwards.
  FlatRow take();

 private:
  struct Cell {
    std::string key;  ///< relative to the container the cell is in
    std::string text;
    bool is_string = false;
  };
  /// An open container: its key in its parent, whether it is an array, and its cells so far.
  struct Level {
    std::string key;
    bool array = false;
    std::size_t elements = 0;  ///< an array's elements so far (their index)
    std::vector<Cell> cells;
  };
  void cell(std::string_view key, std::string text, bool is_string = false);

  std::string m_what;
  std::vector<Level> m_levels;
  FlatRow m_row;
};

}  // namespace memwall
