#pragma once
/// The one JSON writer of every output (the run report, io, traffic, roofline, what-if, trace
/// counts, validation and calibration reports): objects and arrays with two-space indentation, one
/// member per line, or, for a container opened inline, all on one line ("{"a": 1, "b": 2}");
/// fixed number formats, so the same values give the same bytes.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memwall {

class JsonWriter {
 public:
  /// How a container lays out its members.
  enum class Layout : std::uint8_t {
    kLines,  ///< each member on its own line, indented two spaces per level
    kInline,  ///< all members on the container's line, separated by ", "
  };

  /// Opens an object ('{') or array ('[') as member `key` (empty: an array element or the
  /// document itself). Members of an inline container are inline too.
  void open(std::string_view key, char bracket, Layout layout = Layout::kLines);
  /// Closes the innermost container.
  void close();

  void integer(std::string_view key, std::uint64_t v);
  /// A finite double with `significant` digits ("%.*g"); a non-finite one as null (JSON has no
  /// infinity or NaN).
  void number(std::string_view key, double v, int significant = 9);
  void boolean(std::string_view key, bool v);
  void string(std::string_view key, std::string_view v);
  void null(std::string_view key);
  /// A value already written as JSON text, e.g. a number in a fixed format of its own ("%.9e").
  void raw(std::string_view key, std::string_view json);
  /// A workload parameter's text: a plain non-negative integer (no leading zero, below 10^18) is
  /// written as a number, anything else as a string.
  void param(std::string_view key, std::string_view v);

  /// The document, ending in a newline; the writer is empty afterwards.
  std::string take();

 private:
  struct Level {
    char bracket;
    bool inline_members;
    bool first = true;
  };
  void prefix(std::string_view key);
  void newline();

  std::string m_out;
  std::vector<Level> m_levels;
};

/// A double as JsonWriter::number writes it.
std::string json_number_text(double v, int significant = 9);

}  // namespace memwall
