#include "sim/core/error.h"

#include <utility>

namespace memwall {
namespace {

std::string config_message(const SourcePos& pos, const std::string& key, const std::string& reason) {
  std::string msg = pos.file.empty() ? std::string("<config>") : pos.file;
  if (pos.line > 0) {
    msg += ":" + std::to_string(pos.line);
    if (pos.column > 0) msg += ":" + std::to_string(pos.column);
  }
  msg += ": ";
  if (!key.empty()) msg += key + ": ";
  return msg + reason;
}

}  // namespace

ConfigError::ConfigError(SourcePos pos, std::string key_path, std::string reason)
    : Error(config_message(pos, key_path, reason)),
      m_pos(std::move(pos)),
      m_key_path(std::move(key_path)),
      m_reason(std::move(reason)) {}

TraceError::TraceError(std::string file, std::uint64_t offset, std::string reason)
    : Error(file + ": byte " + std::to_string(offset) + ": " + reason), m_offset(offset) {}

}  // namespace memwall
