// `memwall run` and `memwall replay` as a user calls them: run ≡ trace + replay, the timeline
// file, side-by-side workloads, and bad input giving one clear error and exit code 2.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/cli.h"

namespace {

namespace fs = std::filesystem;

/// A scratch directory removed at the end of the test.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("memwall-test-run-" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() { fs::remove_all(dir); }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

using memwall::test::run_memwall;
using Result = memwall::test::CliResult;

/// A strict JSON syntax check (RFC 8259 grammar, without number-range checks).
class JsonChecker {
 public:
  explicit JsonChecker(const std::string& text) : m_s(text) {}
  bool valid() {
    ws();
    if (!value()) return false;
    ws();
    return m_i == m_s.size();
  }

 private:
  bool value() {
    if (m_i >= m_s.size()) return false;
    const char c = m_s[m_i];
    if (c == '{') return container('}', true);
    if (c == '[') return container(']', false);
    if (c == '"') return string();
    for (const char* lit : {"true", "false", "null"}) {
      if (m_s.compare(m_i, std::string(lit).size(), lit) == 0) {
        m_i += std::string(lit).size();
        return true;
      }
    }
    const std::size_t start = m_i;
    while (m_i < m_s.size() && std::string("+-0123456789.eE").find(m_s[m_i]) != std::string::npos)
      ++m_i;
    return m_i > start;
  }
  bool container(char close, bool object) {
    ++m_i;
    ws();
    if (m_i < m_s.size() && m_s[m_i] == close) return ++m_i, true;
    while (true) {
      ws();
      if (object) {
        if (!string()) return false;
        ws();
        if (m_i >= m_s.size() || m_s[m_i++] != ':') return false;
        ws();
      }
      if (!value()) return false;
      ws();
      if (m_i >= m_s.size()) return false;
      if (m_s[m_i] == ',') {
        ++m_i;
        continue;
      }
      return m_s[m_i++] == close;
    }
  }
  bool string() {
    if (m_i >= m_s.size() || m_s[m_i] != '"') return false;
    for (++m_i; m_i < m_s.size(); ++m_i) {
      if (m_s[m_i] == '\\') {
        ++m_i;
      } else if (m_s[m_i] == '"') {
        ++m_i;
        return true;
      } else if (static_cast<unsigned char>(m_s[m_i]) < 0x20) {
        return false;
      }
    }
    return false;
  }
  void ws() {
    while (m_i < m_s.size() && std::string(" \t\r\n").find(m_s[m_i]) != std::string::npos) ++m_i;
  }
  const std::string& m_s;
  std::size_t m_i = 0;
};

const char* const kShape = "--seq 512 --head-dim 64 --heads 4";

}  // namespace

TEST_CASE("memwall replay of a trace written by memwall trace gives the same JSON as memwall run",
          "[run][cli]") {
  Scratch s;
  for (const std::string workload : {"flash2", "naive"}) {
    const Result run = run_memwall("run --config h200 --workload " + workload + " " + kShape +
                                   " --json " + (s / "run.json"));
    REQUIRE(run.code == 0);
    const Result trace = run_memwall("trace --config h200 --workload " + workload + " " + kShape +
                                     " -o " + (s / "w.mwt"));
    REQUIRE(trace.code == 0);
    const Result replay =
        run_memwall("replay --config h200 " + (s / "w.mwt") + " --json " + (s / "replay.json"));
    REQUIRE(replay.code == 0);
    CHECK(memwall::test::slurp(s / "run.json") == memwall::test::slurp(s / "replay.json"));
    CHECK(run.out == replay.out);
  }
}

TEST_CASE("memwall run writes a well-formed timeline that records how it was bounded",
          "[run][cli]") {
  Scratch s;
  const Result r = run_memwall(std::string("run --config h200 --workload naive ") + kShape +
                               " --timeline " + (s / "t.json"));
  REQUIRE(r.code == 0);
  const std::string text = memwall::test::slurp(s / "t.json");
  CHECK(JsonChecker(text).valid());
  CHECK_FALSE(JsonChecker(text.substr(0, text.size() / 2)).valid());  // the checker does check
  CHECK(text.find("\"traceEvents\"") != std::string::npos);
  CHECK(text.find("\"cta_slices_written\"") != std::string::npos);
  CHECK(text.find("\"op_event_budget\"") != std::string::npos);
  CHECK(text.find("\"name\":\"softmax\"") != std::string::npos);
}

TEST_CASE("memwall run with a comma list shows the workloads side by side with their ratios",
          "[run][cli]") {
  Scratch s;
  const Result r = run_memwall(std::string("run --config h200 --workload naive,flash2 ") + kShape +
                               " --json " + (s / "both.json"));
  REQUIRE(r.code == 0);
  CHECK(r.out.find("naive/flash2") != std::string::npos);
  const std::string json = memwall::test::slurp(s / "both.json");
  CHECK(json.front() == '[');
  CHECK(JsonChecker(json).valid());
  CHECK(json.find("\"flash2\"") != std::string::npos);
}

TEST_CASE("Bad input to run and replay is one clear error with exit code 2", "[run][cli]") {
  Scratch s;
  {
    std::ofstream(s / "bad.yaml") << "name: x\nsm:\n  count: [\n";
    const Result r = run_memwall("run --config " + (s / "bad.yaml") + " --workload flash2");
    CHECK(r.code == 2);
    CHECK(r.out.find("bad.yaml") != std::string::npos);
  }
  {
    std::ofstream(s / "junk.mwt") << "this is not a trace";
    const Result r = run_memwall("replay --config h200 " + (s / "junk.mwt"));
    CHECK(r.code == 2);
    CHECK(r.out.find("junk.mwt") != std::string::npos);
    CHECK(r.out.find("byte") != std::string::npos);
  }
  {
    const Result r = run_memwall("replay --config h200 " + (s / "missing.mwt"));
    CHECK(r.code == 2);
    CHECK(r.out.find("missing.mwt") != std::string::npos);
  }
  {
    const Result r = run_memwall("run --config h200 --workload flash9");
    CHECK(r.code == 2);
    CHECK(r.out.find("flash9") != std::string::npos);
  }
  {
    const Result r =
        run_memwall("run --config h200 --workload naive,flash2 --timeline " + (s / "t.json"));
    CHECK(r.code == 2);
    CHECK_FALSE(fs::exists(s / "t.json"));
  }
}

TEST_CASE("memwall run and replay --help list every option and end with examples", "[run][cli]") {
  for (const std::string cmd : {"run", "replay"}) {
    const Result r = run_memwall(cmd + " --help");
    CHECK(r.code == 0);
    CHECK(r.out.find("Examples:") != std::string::npos);
    CHECK(r.out.find("--flush-l2 ") != std::string::npos);
    CHECK(r.out.find("--timeline") != std::string::npos);
  }
}
