#include "sim/core/error.h"

#include <utility>

namespace memwall {
namespace {

/// `text` cut in the middle when longer than `max` bytes, so that a 10 MB bad value in a config
/// is not echoed whole to stderr (issue 18, finding 20): its start and end stay, with the count of
/// bytes left out between them.
std::string cut_long(std::string text, std::size_t max) {
  if (text.size() <= max) return text;
  const std::size_t tail = max / 5;
  const std::size_t head = max - tail;
  const std::size_t cut = text.size() - head - tail;
  return text.substr(0, head) + "... [" + std::to_string(cut) + " bytes cut] ..." +
         text.substr(text.size() - tail);
}

/// The longest key path and reason a ConfigError message shows whole.
constexpr std::size_t kMaxKeyShown = 200;
constexpr std::size_t kMaxReasonShown = 600;

std::string config_message(const SourcePos& pos, const std::string& key,
                           const std::string& reason) {
  std::string msg = format_source_pos(pos) + ": ";
  if (!key.empty()) msg += key + ": ";
  return msg + reason;
}

}  // namespace

std::string format_source_pos(const SourcePos& pos) {
  // The place may be an override's own text ("--set KEY=VALUE"), as long as its value.
  std::string place = pos.file.empty() ? std::string("<config>") : cut_long(pos.file, kMaxKeyShown);
  if (pos.line > 0) {
    place += ":" + std::to_string(pos.line);
    if (pos.column > 0) place += ":" + std::to_string(pos.column);
  }
  return place;
}

ConfigError::ConfigError(SourcePos pos, std::string key_path, std::string reason)
    : Error(
          config_message(pos, cut_long(key_path, kMaxKeyShown), cut_long(reason, kMaxReasonShown))),
      m_pos(std::move(pos)),
      m_key_path(cut_long(std::move(key_path), kMaxKeyShown)),
      m_reason(cut_long(std::move(reason), kMaxReasonShown)) {}

TraceError::TraceError(std::string file, std::uint64_t offset, std::string reason)
    : Error(file + ": byte " + std::to_string(offset) + ": " + reason), m_offset(offset) {}

}  // namespace memwall
