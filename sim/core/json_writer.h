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

/// What a document (a report) is written to, member by member: JSON text (JsonWriter), or flat
/// cells for a sweep's columns (studies/sweep_flatten.h's FlatRowWriter), so that one function
/// lists a report's members for both.
class DocumentWriter {
 public:
  /// How a container lays out its members (JSON text only; flat cells have no layout).
  enum class Layout : std::uint8_t {
    kLines,  ///< each member on its own line, indented two spaces per level
    kInline,  ///< all members on the container's line, separated by ", "
  };

  /// Opens an object ('{') or array ('[') as member `key` (empty: an array element or the
  /// document itself). Members of an inline container are inline too.
  virtual void open(std::string_view key, char bracket, Layout layout = Layout::kLines) = 0;
  /// Closes the innermost container.
  virtual void close() = 0;

  virtual void integer(std::string_view key, std::uint64_t v) = 0;
  /// A finite double with `significant` digits ("%.*g"); a non-finite one as null (JSON has no
  /// infinity or NaN).
  virtual void number(std::string_view key, double v, int significant = 9) = 0;
  virtual void boolean(std::string_view key, bool v) = 0;
  virtual void string(std::string_view key, std::string_view v) = 0;
  virtual void null(std::string_view key) = 0;
  /// A value already written as JSON text, e.g. a number in a fixed format of its own ("%.9e").
  virtual void raw(std::string_view key, std::string_view json) = 0;
  /// A workload parameter's text: a plain non-negative integer (no leading zero, below 10^18) is
  /// written as a number, anything else as a string.
  virtual void param(std::string_view key, std::string_view v) = 0;

 protected:
  ~DocumentWriter() = default;
};

class JsonWriter final : public DocumentWriter {
 public:
  void open(std::string_view key, char bracket, Layout layout = Layout::kLines) override;
  void close() override;
  void integer(std::string_view key, std::uint64_t v) override;
  void number(std::string_view key, double v, int significant = 9) override;
  void boolean(std::string_view key, bool v) override;
  void string(std::string_view key, std::string_view v) override;
  void null(std::string_view key) override;
  void raw(std::string_view key, std::string_view json) override;
  void param(std::string_view key, std::string_view v) override;

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
