#include "sim/core/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "sim/core/error.h"

namespace memwall {

AtomicFile::AtomicFile(std::string path)
    : m_path(std::move(path)), m_tmp_path(m_path + ".tmp." + std::to_string(::getpid())) {
  m_out.open(m_tmp_path, std::ios::binary | std::ios::trunc);
  if (!m_out) {
    throw Error(m_path + ": cannot create output file: " + std::strerror(errno));
  }
}

AtomicFile::~AtomicFile() {
  if (!m_committed) {
    m_out.close();
    std::remove(m_tmp_path.c_str());
  }
}

void AtomicFile::commit() {
  m_out.flush();
  const bool ok = static_cast<bool>(m_out);
  m_out.close();
  if (!ok || m_out.fail()) {
    std::remove(m_tmp_path.c_str());
    m_committed = true;
    throw Error(m_path + ": write failed (disk full?)");
  }
  if (std::rename(m_tmp_path.c_str(), m_path.c_str()) != 0) {
    const int err = errno;
    std::remove(m_tmp_path.c_str());
    m_committed = true;
    throw Error(m_path + ": cannot rename the finished output into place: " + std::strerror(err));
  }
  m_committed = true;
}

void write_file_atomically(const std::string& path, const std::string& content) {
  AtomicFile file(path);
  file.stream().write(content.data(), static_cast<std::streamsize>(content.size()));
  file.commit();
}

}  // namespace memwall
