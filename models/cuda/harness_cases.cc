#include "models/cuda/harness_cases.h"

#include <charconv>
#include <sstream>

#include "models/cuda/flash2_attention.h"
#include "sim/core/error.h"

namespace memwall::cuda {
namespace {

constexpr int kSweepSeqs[] = {512, 1024, 2048, 4096, 8192, 16384};
constexpr int kHeadDims[] = {64, 128};
struct BatchHeads {
  int batch;
  int heads;
};
constexpr BatchHeads kSweepBatchHeads[] = {{1, 8}, {4, 16}};

int parse_int(const std::string& spec, const std::string& key, const std::string& value) {
  int out = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, out);
  if (ec != std::errc() || ptr != end || value.empty()) {
    throw UsageError("--case '" + spec + "': " + key + ": not an integer: '" + value + "'");
  }
  if (out <= 0) {
    throw UsageError("--case '" + spec + "': " + key + ": must be positive, got " + value);
  }
  return out;
}

HarnessCase make_flash2(int batch, int heads, int seq, int head_dim, Flash2Blocks blocks) {
  HarnessCase c;
  c.workload = Workload::kFlash2;
  c.shape = {batch, heads, seq, head_dim};
  c.flash2 = blocks;
  return c;
}

HarnessCase make_naive(int batch, int heads, int seq, int head_dim, NaiveBlocks blocks) {
  HarnessCase c;
  c.workload = Workload::kNaive;
  c.shape = {batch, heads, seq, head_dim};
  c.naive = blocks;
  return c;
}

}  // namespace

std::string workload_name(Workload workload) {
  return workload == Workload::kNaive ? "naive" : "flash2";
}

Flash2Blocks default_flash2_blocks(int head_dim) {
  Flash2Blocks blocks;
  blocks.block_q = 128;
  blocks.block_kv = head_dim <= 64 ? 128 : 64;
  blocks.stages = 2;
  return blocks;
}

HarnessCase parse_case(const std::string& spec) {
  HarnessCase c;
  bool have_workload = false;
  bool have_seq = false;
  bool have_dim = false;
  bool have_bq = false;
  bool have_bkv = false;
  bool have_stages = false;
  std::stringstream in(spec);
  std::string item;
  int block_q = 0;
  int block_kv = 0;
  int stages = 0;
  while (std::getline(in, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) {
      throw UsageError("--case '" + spec + "': expected key=value, got '" + item + "'");
    }
    const std::string key = item.substr(0, eq);
    const std::string value = item.substr(eq + 1);
    if (key == "workload") {
      if (value == "naive") {
        c.workload = Workload::kNaive;
      } else if (value == "flash2") {
        c.workload = Workload::kFlash2;
      } else {
        throw UsageError("--case '" + spec + "': workload: must be naive or flash2, got '" +
                         value + "'");
      }
      have_workload = true;
    } else if (key == "batch") {
      c.shape.batch = parse_int(spec, key, value);
    } else if (key == "heads") {
      c.shape.heads = parse_int(spec, key, value);
    } else if (key == "seq") {
      c.shape.seq = parse_int(spec, key, value);
      have_seq = true;
    } else if (key == "head_dim") {
      c.shape.head_dim = parse_int(spec, key, value);
      have_dim = true;
    } else if (key == "dtype") {
      if (value != "fp16") {
        throw UsageError("--case '" + spec + "': dtype: only fp16 kernels exist, got '" + value +
                         "'");
      }
    } else if (key == "block_q") {
      block_q = parse_int(spec, key, value);
      have_bq = true;
    } else if (key == "block_kv") {
      block_kv = parse_int(spec, key, value);
      have_bkv = true;
    } else if (key == "block_k") {
      c.naive.block_k = parse_int(spec, key, value);
    } else if (key == "softmax_rows") {
      c.naive.softmax_rows = parse_int(spec, key, value);
    } else if (key == "stages") {
      stages = parse_int(spec, key, value);
      have_stages = true;
    } else {
      throw UsageError("--case '" + spec + "': unknown key '" + key +
                       "' (known: workload, batch, heads, seq, head_dim, dtype, block_q, "
                       "block_kv, block_k, stages, softmax_rows)");
    }
  }
  if (!have_workload || !have_seq || !have_dim) {
    throw UsageError("--case '" + spec + "': workload, seq and head_dim are required");
  }
  if (c.workload == Workload::kFlash2) {
    c.flash2 = default_flash2_blocks(c.shape.head_dim);
    if (have_bq) c.flash2.block_q = block_q;
    if (have_bkv) c.flash2.block_kv = block_kv;
    if (have_stages) c.flash2.stages = stages;
  } else {
    if (have_bq) c.naive.block_q = block_q;
    if (have_bkv) c.naive.block_kv = block_kv;
    if (have_stages) {
      throw UsageError("--case '" + spec + "': stages applies to flash2 only");
    }
  }
  return c;
}

std::vector<HarnessCase> builtin_cases(const std::string& name) {
  std::vector<HarnessCase> cases;
  if (name == "check") {
    // Small shapes; 1000 leaves partial blocks for every block size, softmax_rows 3 a partial
    // softmax CTA.
    for (const int seq : {256, 1000}) {
      for (const Flash2Variant& v : flash2_variants()) {
        cases.push_back(make_flash2(2, 3, seq, v.head_dim, {v.block_q, v.block_kv, v.stages}));
      }
      for (const int d : kHeadDims) {
        cases.push_back(make_naive(2, 3, seq, d, NaiveBlocks{128, 128, 64, 4}));
        cases.push_back(make_naive(2, 3, seq, d, NaiveBlocks{64, 64, 64, 3}));
      }
    }
    return cases;
  }
  if (name == "sweep" || name == "profile") {
    const bool profile = name == "profile";
    for (const int d : kHeadDims) {
      for (const int seq : kSweepSeqs) {
        for (const BatchHeads bh : kSweepBatchHeads) {
          for (const Flash2Variant& v : flash2_variants()) {
            if (v.head_dim == d) {
              cases.push_back(
                  make_flash2(bh.batch, bh.heads, seq, d, {v.block_q, v.block_kv, v.stages}));
            }
          }
          // Naive materialises S and P (B·H·N²·2 bytes each): at N ≥ 8192 only B·H = 8 in the
          // ncu subset, whose kernel replay saves and restores the buffers a kernel writes.
          const bool big = bh.batch * bh.heads > 8 && seq >= 8192;
          if (!(profile && big) && !(big && seq > 8192)) {
            cases.push_back(make_naive(bh.batch, bh.heads, seq, d, NaiveBlocks{}));
          }
        }
      }
    }
    return cases;
  }
  throw UsageError("--sweep: unknown sweep '" + name + "' (known: check, sweep, profile)");
}

std::string case_csv_header() {
  return "workload,batch,heads,seq,head_dim,dtype,block_q,block_kv,block_k,stages,softmax_rows";
}

std::string case_csv_columns(const HarnessCase& c) {
  std::string out = workload_name(c.workload) + "," + std::to_string(c.shape.batch) + "," +
                    std::to_string(c.shape.heads) + "," + std::to_string(c.shape.seq) + "," +
                    std::to_string(c.shape.head_dim) + ",fp16,";
  if (c.workload == Workload::kNaive) {
    out += std::to_string(c.naive.block_q) + "," + std::to_string(c.naive.block_kv) + "," +
           std::to_string(c.naive.block_k) + ",," + std::to_string(c.naive.softmax_rows);
  } else {
    out += std::to_string(c.flash2.block_q) + "," + std::to_string(c.flash2.block_kv) + ",," +
           std::to_string(c.flash2.stages) + ",";
  }
  return out;
}

std::vector<std::string> case_kernels(const HarnessCase& c) {
  if (c.workload == Workload::kNaive) {
    return {"qk", "softmax", "pv"};
  }
  return {"flash2_fwd"};
}

}  // namespace memwall::cuda
