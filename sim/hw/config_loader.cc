#include "sim/hw/config_loader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string_view>
#include <tuple>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "sim/core/error.h"
#include "sim/hw/config_schema.h"
#include "sim/hw/topology.h"

namespace memwall {
namespace {

namespace fs = std::filesystem;

/// The text of one key as written, and where.
struct RawEntry {
  std::string text;
  SourcePos pos;
};

/// A config before typing: key path → text, merged over `extends` and --set.
struct RawConfig {
  std::map<std::string, RawEntry> values;
  std::map<std::string, SourcePos> sections;  ///< where each section was opened (for "missing")
  SourcePos root;  ///< the top of the outermost file
};

/// A yaml-cpp mark (0-based line and column) as a 1-based position; 0 when the mark is unknown.
SourcePos mark_pos(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null()) return SourcePos{file, 0, 0};
  return SourcePos{file, mark.line + 1, mark.column + 1};
}

/// "a100-40gb, a100-80gb, ..." for messages about a name that matched nothing.
std::string known_presets_text() {
  std::string out;
  for (const PresetInfo& p : list_presets()) out += (out.empty() ? "" : ", ") + p.id;
  return out.empty() ? std::string("(none found in ") + presets_dir() + ")" : out;
}

/// A value of `extends` (or a FILE argument) is a path when it has a slash or a YAML suffix;
/// otherwise it is a preset name.
bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || s.ends_with(".yaml") || s.ends_with(".yml");
}

/// A scalar's text, or a ConfigError when the node is a map, a sequence or empty.
/// `key_pos` is where the key was written: an empty value has no position of its own.
std::string scalar_text(const YAML::Node& node, const std::string& file, const std::string& key,
                        const SourcePos& key_pos) {
  if (node.IsNull()) throw ConfigError(key_pos, key, "has no value");
  if (!node.IsScalar()) {
    throw ConfigError(
        mark_pos(file, node.Mark()), key,
        std::string("expected a single value, got a ") + (node.IsMap() ? "mapping" : "list"));
  }
  return node.Scalar();
}

/// The reason for an unknown key: a did-you-mean when a declared key is close, otherwise the keys
/// valid in that section (or at the top level).
std::string unknown_key_reason(const std::string& path) {
  std::string reason = "unknown key";
  // A section's name where a key was expected ("--set l2=5"), or in the wrong case ("SM:"): the
  // nearest key by spelling ("efficiency.l2") would point the wrong way.
  if (path.find('.') == std::string::npos) {
    std::string lower = path;
    for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    for (const std::string& section : config_sections()) {
      if (section != lower) continue;
      std::string keys;
      for (const KeyDecl& k : config_schema()) {
        if (std::string_view(k.path).starts_with(section + ".") && keys.size() < 60) {
          keys += (keys.empty() ? "" : ", ") + std::string(k.path);
        }
      }
      if (section == path) {
        return "is a section, not a key: name one of its keys (" + keys + ", ...), as " + section +
               ".KEY=VALUE on the command line or indented under \"" + section + ":\" in a file";
      }
      return reason + " (did you mean the section \"" + section + "\"? names are lowercase)";
    }
  }
  const std::string suggestion = suggest_key(path);
  if (!suggestion.empty()) return reason + " (did you mean \"" + suggestion + "\"?)";
  const auto dot = path.find('.');
  const std::string section = dot == std::string::npos ? std::string() : path.substr(0, dot);
  std::string valid;
  for (const KeyDecl& k : config_schema()) {
    const std::string kp(k.path);
    const auto kdot = kp.find('.');
    const std::string ks = kdot == std::string::npos ? std::string() : kp.substr(0, kdot);
    if (ks == section) valid += (valid.empty() ? "" : ", ") + kp;
  }
  if (section.empty()) {
    for (const std::string& s : config_sections()) valid += ", " + s;
    return reason + " (valid at the top level: " + valid + ")";
  }
  return reason + " (valid here: " + valid + ")";
}

/// The 1-based line where a second YAML document starts in `text` (a `---` or `...` marker at the
/// start of a line after the first document's content), or 0 when the text holds one document.
/// Markers inside block scalars are indented, so they do not count.
int second_document_line(const std::string& text) {
  bool content = false;  // the first document has begun
  bool ended = false;  // a `...` closed it
  int line = 0;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view l(text.data() + start, end - start);
    ++line;
    auto marker = [&](std::string_view m) {
      return l.substr(0, 3) == m && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    };
    if (marker("---")) {
      if (content) return line;
    } else if (marker("...")) {
      ended = content;
    } else {
      const std::size_t first = l.find_first_not_of(" \t\r");
      const bool blank = first == std::string_view::npos || l[first] == '#';
      if (!blank && l[0] != '%') {
        if (ended) return line;
        content = true;
      }
    }
    start = end + 1;
  }
  return 0;
}

/// " (line N is indented with a tab: YAML indents with spaces only)" for the first line of `file`
/// whose indentation holds a tab, which yaml-cpp reports as an "illegal map value" or the like;
/// "" when there is none.
std::string tab_hint(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    if (line.find('\t') < first) {
      return " (line " + std::to_string(number) +
             " is indented with a tab: YAML indents with spaces only)";
    }
  }
  return "";
}

/// The most files one `extends` chain may hold: deep enough for any real config, shallow enough
/// that the loader's recursion never exhausts the stack (a 5,000-file chain once crashed it).
constexpr std::size_t kMaxExtendsDepth = 64;

/// Loads `file` and its bases into `raw`; `chain` holds the canonical paths being loaded, outermost
/// first, to detect `extends` cycles.
void load_raw(const std::string& file, RawConfig& raw, std::vector<std::string>& chain);

/// Parses one YAML file into `raw` (after loading its base, when it extends one).
void load_file_layer(const std::string& file, RawConfig& raw, std::vector<std::string>& chain) {
  // Checked here so that a missing file is one clear line, not yaml-cpp's BadFile.
  std::error_code ec;
  if (!fs::exists(file, ec)) throw ConfigError(SourcePos{file, 0, 0}, "", "no such file");
  if (!fs::is_regular_file(file, ec))
    throw ConfigError(SourcePos{file, 0, 0}, "", "not a regular file");
  YAML::Node root;
  try {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw YAML::BadFile(file);
    std::ostringstream text;
    text << in.rdbuf();
    // A second document would be silently ignored by YAML::Load: refuse it. (Not with
    // YAML::LoadAll, which loops for ever on some malformed inputs: the fuzzer found one.)
    if (const int line = second_document_line(text.str()); line > 0) {
      throw ConfigError(SourcePos{file, line, 1}, "",
                        "a second YAML document starts here (after ---); a config is one document");
    }
    root = YAML::Load(text.str());
  } catch (const YAML::ParserException& e) {
    throw ConfigError(mark_pos(file, e.mark), "", "malformed YAML: " + e.msg + tab_hint(file));
  } catch (const YAML::BadFile&) {
    throw ConfigError(SourcePos{file, 0, 0}, "", "cannot read the file");
  }
  if (root.IsNull()) {
    throw ConfigError(SourcePos{file, 1, 1}, "",
                      "the file is empty; expected a mapping with name, sm, xbar, l2, hbm");
  }
  if (!root.IsMap()) {
    throw ConfigError(mark_pos(file, root.Mark()), "",
                      "expected a mapping of keys (name, sm, xbar, l2, hbm, ...) at the top level");
  }

  // `extends` first: the base's keys are the layer this file overrides.
  // (Looked up through a const node: the non-const operator[] of yaml-cpp may create the key.)
  if (const YAML::Node base = std::as_const(root)["extends"]) {
    const SourcePos pos = mark_pos(file, base.Mark());
    const std::string target = scalar_text(base, file, "extends", pos);
    std::string base_path;
    // A path is relative to the extending file, not to the working directory.
    if (looks_like_path(target)) {
      base_path = (fs::path(file).parent_path() / target).lexically_normal().string();
      if (!fs::exists(base_path, ec)) {
        throw ConfigError(pos, "extends", "no such file: " + base_path);
      }
    } else {
      try {
        base_path = resolve_config_path(target);
      } catch (const ConfigError& e) {
        throw ConfigError(pos, "extends", e.reason());
      }
    }
    const std::string canonical = fs::weakly_canonical(base_path, ec).string();
    if (chain.size() >= kMaxExtendsDepth) {
      throw ConfigError(pos, "extends",
                        "extends chain deeper than " + std::to_string(kMaxExtendsDepth) +
                            " files (at " + canonical + "); is it generated by mistake?");
    }
    if (std::find(chain.begin(), chain.end(), canonical) != chain.end()) {
      std::string cycle;
      for (const std::string& c : chain) cycle += c + " -> ";
      throw ConfigError(pos, "extends", "extends cycle: " + cycle + canonical);
    }
    load_raw(base_path, raw, chain);
  }
  // What the base said of itself, to tell whether this file replaces it (below).
  const bool extends_base = static_cast<bool>(std::as_const(root)["extends"]);
  const auto base_name = raw.values.find("name");
  const std::string base_name_text =
      base_name == raw.values.end() ? std::string() : base_name->second.text;
  std::vector<std::string> overridden;  // "key = value" of this file's chip keys, as written

  // Every other top-level key: a section (a mapping of scalars) or a top-level scalar. Later layers
  // (this file over its base, --set over files) overwrite earlier ones key by key.
  std::map<std::string, int> seen;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const SourcePos key_pos = mark_pos(file, it->first.Mark());
    if (!it->first.IsScalar()) throw ConfigError(key_pos, "", "a key must be a plain name");
    const std::string key = it->first.Scalar();
    if (seen[key]++ > 0) throw ConfigError(key_pos, key, "duplicate key");
    if (key == "extends") continue;
    const std::vector<std::string> sections = config_sections();
    if (std::find(sections.begin(), sections.end(), key) != sections.end()) {
      const YAML::Node section = it->second;
      if (section.IsNull()) continue;  // an empty section sets nothing
      if (!section.IsMap()) {
        throw ConfigError(mark_pos(file, section.Mark()), key,
                          "expected a mapping of " + key + ".* keys");
      }
      raw.sections[key] = key_pos;
      std::map<std::string, int> seen_in_section;
      for (auto jt = section.begin(); jt != section.end(); ++jt) {
        const SourcePos leaf_pos = mark_pos(file, jt->first.Mark());
        if (!jt->first.IsScalar()) throw ConfigError(leaf_pos, key, "a key must be a plain name");
        const std::string leaf = jt->first.Scalar();
        const std::string path = key + "." + leaf;
        if (seen_in_section[leaf]++ > 0) throw ConfigError(leaf_pos, path, "duplicate key");
        if (find_key(path) == nullptr) throw ConfigError(leaf_pos, path, unknown_key_reason(path));
        raw.values[path] = RawEntry{scalar_text(jt->second, file, path, leaf_pos),
                                    mark_pos(file, jt->second.Mark())};
        const std::string& written = raw.values[path].text;
        overridden.push_back(path + " = " +
                             (written.size() > 40 ? written.substr(0, 40) + "..." : written));
      }
      continue;
    }
    if (key.find('.') != std::string::npos && find_key(key) != nullptr) {
      throw ConfigError(key_pos, key,
                        "dotted keys are not accepted at the top level; write it inside its "
                        "section (\"" +
                            key.substr(0, key.find('.')) + ":\")");
    }
    if (key.find('.') != std::string::npos || find_key(key) == nullptr) {
      throw ConfigError(key_pos, key, unknown_key_reason(key));
    }
    raw.values[key] =
        RawEntry{scalar_text(it->second, file, key, key_pos), mark_pos(file, it->second.Mark())};
  }
  // A file that changes its base's chip keys without a description of its own would inherit one
  // naming the base's values ("... 4.8 TB/s" over a 6.7 TB/s override): say what it changed.
  if (extends_base && !overridden.empty() && seen.count("description") == 0) {
    constexpr std::size_t kShown = 4;
    std::string text =
        (base_name_text.empty() ? std::string("its base") : base_name_text) + " with ";
    for (std::size_t i = 0; i < std::min(overridden.size(), kShown); ++i) {
      text += (i == 0 ? "" : ", ") + overridden[i];
    }
    if (overridden.size() > kShown) {
      text += " and " + std::to_string(overridden.size() - kShown) + " more";
    }
    raw.values["description"] = RawEntry{text, SourcePos{file, 1, 1}};
  }
}

void load_raw(const std::string& file, RawConfig& raw, std::vector<std::string>& chain) {
  std::error_code ec;
  chain.push_back(fs::weakly_canonical(file, ec).string());
  load_file_layer(file, raw, chain);
  chain.pop_back();
}

/// The place of a value set by an override: "--set KEY.PATH=VALUE".
constexpr std::string_view kSetPlace = "--set ";

/// Applies one --set "KEY.PATH=VALUE" over the files' keys; the override itself is the position
/// its errors name.
void apply_override(const std::string& text, RawConfig& raw) {
  const SourcePos pos{std::string(kSetPlace) + text, 0, 0};
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError(pos, "", "expected KEY.PATH=VALUE, e.g. l2.size=\"100 MiB\"");
  }
  std::string key = text.substr(0, eq);
  while (!key.empty() && key.back() == ' ') key.pop_back();
  std::string value = text.substr(eq + 1);
  while (!value.empty() && value.front() == ' ') value.erase(value.begin());
  const KeyDecl* decl = find_key(key);
  if (decl == nullptr) throw ConfigError(pos, key, unknown_key_reason(key));
  if (decl->store == nullptr) throw ConfigError(pos, key, "cannot be overridden with --set");
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front()) {
    value = value.substr(1, value.size() - 2);
  }
  raw.values[key] = RawEntry{value, pos};
}

/// A whole number without unit or sign. Throws UnitError (the caller adds file and key).
std::uint64_t parse_integer(const std::string& text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range) throw UnitError("integer too large: \"" + text + "\"");
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw UnitError("expected a whole number without unit, got \"" + text + "\"");
  }
  return v;
}

/// A finite real number without unit. Throws UnitError.
double parse_real(const std::string& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
    throw UnitError("expected a number without unit, got \"" + text + "\"");
  }
  return v;
}

/// Parses `text` as the key's type; the numeric value in base units goes to `number`.
KeyValue parse_value(const KeyDecl& key, const std::string& text, const Frequency* clock,
                     double& number) {
  switch (key.type) {
    case KeyType::kSize: {
      const Bytes b = parse_bytes(text);
      number = static_cast<double>(b.count);
      return b;
    }
    case KeyType::kBandwidth: {
      // A key that allows 0 (xbar.write_port_bandwidth: "the same as xbar.port_bandwidth").
      if (key.bound == Bound::kNonNegative && (text == "0" || text == "0 B/s" || text == "0B/s")) {
        number = 0;
        return Bandwidth{0};
      }
      const Bandwidth bw = parse_bandwidth(text, clock);
      number = bw.bytes_per_second;
      return bw;
    }
    case KeyType::kFrequency: {
      // A key that allows 0 (sm.tensor_clock: "the same as sm.clock") takes "0" or "0 Hz".
      if (key.bound == Bound::kNonNegative && (text == "0" || text == "0 Hz" || text == "0Hz")) {
        number = 0;
        return Frequency{0};
      }
      const Frequency f = parse_frequency(text);
      number = f.hertz;
      return f;
    }
    case KeyType::kDuration: {
      const Tick t = parse_duration(text, clock);
      number = static_cast<double>(t);
      return KeyValue{std::in_place_type<Tick>, t};
    }
    case KeyType::kInteger: {
      const std::uint64_t v = parse_integer(text);
      number = static_cast<double>(v);
      return KeyValue{std::in_place_type<std::uint64_t>, v};
    }
    case KeyType::kReal: {
      const double v = parse_real(text);
      number = v;
      return KeyValue{std::in_place_type<double>, v};
    }
    case KeyType::kString: number = 0; return KeyValue{std::in_place_type<std::string>, text};
  }
  return KeyValue{};
}

/// Applies the key's declared range and maximum to its value in base units. The maximum is what
/// rejects absurd sizes before anything (topology, cache arrays) is allocated.
void check_bounds(const KeyDecl& key, double v, const std::string& text) {
  switch (key.bound) {
    case Bound::kNone: break;
    case Bound::kPositive:
      if (!(v > 0)) throw UnitError("must be greater than zero, got \"" + text + "\"");
      break;
    case Bound::kNonNegative:
      if (v < 0) throw UnitError("must not be negative, got \"" + text + "\"");
      break;
    case Bound::kFraction:
      if (!(v > 0 && v <= 1)) throw UnitError("must be in (0, 1], got \"" + text + "\"");
      break;
  }
  // Representability (issue 18, finding 3): a cycle or a latency longer than one step of the
  // simulator's bound cannot be simulated; the clock is checked here, before any value in cycles.
  // (0 Hz on a key that allows it means "the default": sm.tensor_clock.)
  if (key.type == KeyType::kFrequency && v < 1.0 && !(v == 0 && key.bound == Bound::kNonNegative)) {
    throw UnitError("\"" + text + "\" is below 1 Hz: one cycle would take longer than " +
                    format_duration(kMaxStepTicks) + ", the simulator's bound for a single step " +
                    "(its clock holds 2^62 ps in all)");
  }
  if (key.type == KeyType::kDuration && v > static_cast<double>(kMaxStepTicks)) {
    throw UnitError(
        "\"" + text + "\" is " + format_duration(static_cast<Tick>(v)) + ", more than " +
        format_duration(kMaxStepTicks) +
        ", the simulator's bound for a single latency (its clock holds 2^62 ps in all)");
  }
  if (key.max > 0 && v > key.max) {
    KeyValue limit;
    switch (key.type) {
      case KeyType::kSize: limit = Bytes{static_cast<std::uint64_t>(key.max)}; break;
      case KeyType::kInteger: limit = static_cast<std::uint64_t>(key.max); break;
      case KeyType::kFrequency: limit = Frequency{key.max}; break;
      default: limit = key.max; break;
    }
    std::string shown =
        key.type == KeyType::kSize        ? format_bytes(std::get<Bytes>(limit))
        : key.type == KeyType::kInteger   ? std::to_string(std::get<std::uint64_t>(limit))
        : key.type == KeyType::kFrequency ? format_frequency(std::get<Frequency>(limit))
                                          : std::to_string(key.max);
    throw UnitError("\"" + text + "\" is more than the largest accepted value, " + shown);
  }
}

/// A size as the reports show it, with its exact byte count where that rounds it ("1 MiB
/// (1048704 B)"), for errors about divisibility.
std::string exact_bytes(Bytes b) {
  const std::string shown = format_bytes(b);
  try {
    if (parse_bytes(shown).count == b.count) return shown;
  } catch (const UnitError&) {  // "1.907 MiB": not a whole number of bytes as shown
  }
  return shown + " (" + std::to_string(b.count) + " B)";
}

/// Where a key was set, for cross-field errors; the file itself when unknown.
using PositionOf = std::function<SourcePos(const std::string&)>;

/// The cross-field invariants of config.h; each failure names the key whose value breaks it, at the
/// position where that key was set.
void validate_with_positions(const HardwareConfig& c, const PositionOf& at) {
  auto fail = [&](const std::string& key, const std::string& reason) {
    throw ConfigError(at(key), key, reason);
  };
  // An invariant between keys, stated on `key`: when `key` comes from a file but one of `others`
  // from --set, the override is what broke it (--set l2.ways=1024 against a preset's l2.size),
  // so the error names the override and says where `key` was set.
  auto fail_between = [&](const std::string& key, std::initializer_list<const char*> others,
                          const std::string& reason) {
    const SourcePos own = at(key);
    const auto is_override = [](const SourcePos& p) { return p.file.starts_with(kSetPlace); };
    if (!is_override(own)) {
      for (const char* other : others) {
        const SourcePos pos = at(other);
        if (!is_override(pos)) continue;
        throw ConfigError(
            pos, other, "with this value, " + key + " (" + format_source_pos(own) + ") " + reason);
      }
    }
    throw ConfigError(own, key, reason);
  };
  // Representability (issue 18, finding 3): one transfer of a unit on one instance of each
  // bandwidth-limited resource must take at most kMaxStepTicks, or a few million of them pass
  // kMaxTick. The bound is stated as the least value the key may take.
  auto step_rate = [&](const std::string& key, double rate, double instances, double efficiency,
                       std::uint64_t unit_bytes, const std::string& unit, const std::string& per) {
    const double per_instance = rate * efficiency / instances;
    const double ps = static_cast<double>(unit_bytes) * 1e12 / per_instance;
    if (ps <= static_cast<double>(kMaxStepTicks)) return;
    const double least = static_cast<double>(unit_bytes) * instances / efficiency;
    char figure[64];
    std::snprintf(figure, sizeof figure, "%.3g s", ps / 1e12);
    fail(key, format_si(rate, "B/s") + " is too slow to simulate: " + per + " would move " + unit +
                  " in " + figure + ", more than " + format_duration(kMaxStepTicks) +
                  ", the simulator's bound for a single transfer (its clock holds 2^62 ps in all); "
                  "the least accepted value here is " +
                  format_si(least, "B/s"));
  };
  const std::string sector = "one " + format_bytes(c.l2.sector_size) + " sector";
  step_rate("hbm.bandwidth", c.hbm.bandwidth.bytes_per_second, c.hbm.channels, c.efficiency.hbm,
            c.l2.sector_size.count, sector,
            "each of its " + std::to_string(c.hbm.channels) + " channels (at efficiency.hbm)");
  // The write and mixed rates are fractions of a channel's read rate: the same bound, on them.
  const double read_rate = c.hbm.bandwidth.bytes_per_second * c.efficiency.hbm / c.hbm.channels;
  for (const auto& [key, fraction] :
       {std::pair<const char*, double>{"hbm.write_rate", c.hbm.write_rate},
        {"hbm.mixed_write_rate", c.hbm.mixed_write_rate},
        {"hbm.mixed_read_rate", c.hbm.mixed_read_rate}}) {
    const double ps = static_cast<double>(c.l2.sector_size.count) * 1e12 / (read_rate * fraction);
    if (ps <= static_cast<double>(kMaxStepTicks)) continue;
    char text[256];
    std::snprintf(text, sizeof text,
                  "%.3g is too slow to simulate: each channel would move one sector in %.3g s, "
                  "more than %s, the simulator's bound for a single transfer; the least accepted "
                  "value here is %.3g",
                  fraction, ps / 1e12, format_duration(kMaxStepTicks).c_str(),
                  static_cast<double>(c.l2.sector_size.count) * 1e12 /
                      (static_cast<double>(kMaxStepTicks) * read_rate));
    fail(key, text);
  }
  step_rate("l2.bandwidth", c.l2.bandwidth.bytes_per_second, c.l2.slices, c.efficiency.l2,
            c.l2.sector_size.count, sector,
            "each of its " + std::to_string(c.l2.slices) + " slices (at efficiency.l2)");
  step_rate("xbar.port_bandwidth", c.xbar.port_bandwidth.bytes_per_second, 1, 1,
            c.l2.sector_size.count, sector, "an SM's port");
  if (c.xbar.write_port_bandwidth.bytes_per_second > 0) {
    step_rate("xbar.write_port_bandwidth", c.xbar.write_port_bandwidth.bytes_per_second, 1, 1,
              c.l2.sector_size.count, sector, "an SM's port (stores)");
  }
  step_rate("sm.smem_bandwidth", c.sm.smem_bandwidth.bytes_per_second, 1, 1, 1, "one byte",
            "an SM's shared memory");
  if (c.sm.warp_load_bandwidth.bytes_per_second > 0) {
    step_rate("sm.warp_load_bandwidth", c.sm.warp_load_bandwidth.bytes_per_second, 1, 1,
              c.l2.sector_size.count, sector, "one warp's loads");
  }
  const Frequency tensor_clock = c.sm.tensor_clock.hertz > 0 ? c.sm.tensor_clock : c.sm.clock;
  auto step_pipe = [&](const std::string& key, double per_cycle, double efficiency,
                       Frequency clock) {
    const double per_second = per_cycle * efficiency * clock.hertz;
    if (per_second >= 1.0) return;
    char figure[64];
    std::snprintf(figure, sizeof figure, "%g per cycle at ", per_cycle);
    fail(key, figure + format_frequency(clock) +
                  " is too slow to simulate: one unit would take longer than " +
                  format_duration(kMaxStepTicks) +
                  ", the simulator's bound for a single step (its clock holds 2^62 ps in all)");
  };
  step_pipe("sm.tensor_flops_per_cycle", c.sm.tensor_flops_per_cycle, c.efficiency.tensor,
            tensor_clock);
  if (c.sm.mma_sync_flops_per_cycle > 0) {
    step_pipe("sm.mma_sync_flops_per_cycle", c.sm.mma_sync_flops_per_cycle, c.efficiency.mma_sync,
              tensor_clock);
  } else {
    step_pipe("sm.tensor_flops_per_cycle", c.sm.tensor_flops_per_cycle, c.efficiency.mma_sync,
              tensor_clock);
  }
  step_pipe("sm.fp32_flops_per_cycle", c.sm.fp32_flops_per_cycle, c.efficiency.fp32, c.sm.clock);
  step_pipe("sm.sfu_ops_per_cycle", c.sm.sfu_ops_per_cycle, c.efficiency.sfu, c.sm.clock);
  step_pipe("sm.issue_per_cycle", c.sm.issue_per_cycle, 1.0, c.sm.clock);
  if (c.power.limited() && !(c.power.limit_watts > c.power.static_watts)) {
    fail_between(
        "power.limit_watts", {"power.static_watts"},
        format_si(c.power.limit_watts, "W") + " is not above power.static_watts (" +
            format_si(c.power.static_watts, "W") +
            "): no clock keeps the board under it, since the static power alone reaches it");
  }
  if (c.sm.smem_per_block > c.sm.smem_per_sm) {
    fail_between("sm.smem_per_block", {"sm.smem_per_sm"},
                 format_bytes(c.sm.smem_per_block) + " is more than sm.smem_per_sm (" +
                     format_bytes(c.sm.smem_per_sm) + "): a CTA using it fits no SM");
  }
  if (c.sm.max_threads_per_block > c.sm.max_threads_per_sm) {
    fail_between("sm.max_threads_per_block", {"sm.max_threads_per_sm"},
                 std::to_string(c.sm.max_threads_per_block) +
                     " is more than sm.max_threads_per_sm (" +
                     std::to_string(c.sm.max_threads_per_sm) + ")");
  }
  if (c.sm.register_alloc_unit % c.sm.warp_size != 0) {
    fail_between("sm.register_alloc_unit", {"sm.warp_size"},
                 std::to_string(c.sm.register_alloc_unit) + " is not a multiple of sm.warp_size (" +
                     std::to_string(c.sm.warp_size) + ")");
  }
  const std::uint64_t line = c.l2.line_size.count;
  if (line == 0 || (line & (line - 1)) != 0) {
    fail("l2.line_size", format_bytes(c.l2.line_size) + " is not a power of two");
  }
  if (c.l2.sector_size.count == 0 || line % c.l2.sector_size.count != 0) {
    fail_between("l2.sector_size", {"l2.line_size"},
                 format_bytes(c.l2.sector_size) + " does not divide l2.line_size (" +
                     format_bytes(c.l2.line_size) + ")");
  }
  if (line / c.l2.sector_size.count > kMaxSectorsPerLine) {
    fail("l2.sector_size", format_bytes(c.l2.sector_size) + " makes " +
                               std::to_string(line / c.l2.sector_size.count) + " sectors per " +
                               format_bytes(c.l2.line_size) + " line; the L2 model holds at most " +
                               std::to_string(kMaxSectorsPerLine) +
                               " (one valid and one dirty bit each)");
  }
  if (c.l2.partitions == 0 || c.l2.slices % c.l2.partitions != 0) {
    fail_between("l2.slices", {"l2.partitions"},
                 std::to_string(c.l2.slices) + " slices cannot be split evenly into " +
                     std::to_string(c.l2.partitions) + " partitions (l2.partitions)");
  }
  if (c.l2.far_reads == FarReads::kCopy && c.l2.partitions > 2) {
    fail_between("l2.far_reads", {"l2.partitions"},
                 "`copy` models two partitions (a line's copy is kept in the other one), "
                 "not " +
                     std::to_string(c.l2.partitions) + " (l2.partitions); use `home`");
  }
  // With one partition nothing is far, and `copy` is never used: a preset's `copy` stays valid
  // when a study (memwall io --ideal) folds the L2 into one partition of one way.
  if (c.l2.far_reads == FarReads::kCopy && c.l2.partitions == 2 && c.l2.ways < 2) {
    fail_between(
        "l2.far_reads", {"l2.partitions", "l2.ways"},
        "`copy` with 2 partitions needs at least 2 ways (l2.ways): a line and its copy share a "
        "set");
  }
  const std::uint64_t set_bytes = std::uint64_t{c.l2.slices} * c.l2.ways * line;
  if (set_bytes == 0 || c.l2.size.count % set_bytes != 0 || c.l2.size.count / set_bytes < 1) {
    // A size that is a round decimal figure was most likely written in MB or GB, which are powers
    // of 1000 here: say so, since the GiB-based sizes of caches are what the user meant.
    const std::uint64_t n = c.l2.size.count;
    std::string hint;
    for (const auto& [unit, binary, scale] :
         {std::tuple{"GB", "GiB", 1'000'000'000ull}, std::tuple{"MB", "MiB", 1'000'000ull},
          std::tuple{"kB", "KiB", 1'000ull}}) {
      if (hint.empty() && n % scale == 0 && n % 1024 != 0) {
        const std::string figure = std::to_string(n / scale);
        hint = " (" + figure + " " + unit + " is decimal, " + std::to_string(n) +
               " bytes; did you mean " + figure + " " + binary + "?)";
      }
    }
    fail_between("l2.size", {"l2.slices", "l2.ways", "l2.line_size"},
                 (hint.empty() ? exact_bytes(c.l2.size) : format_bytes(c.l2.size)) +
                     " is not a whole number (>= 1) of sets: it must be a " +
                     "multiple of l2.slices x l2.ways x l2.line_size = " +
                     std::to_string(c.l2.slices) + " x " + std::to_string(c.l2.ways) + " x " +
                     std::to_string(line) + " B = " + format_bytes(Bytes{set_bytes}) + hint);
  }
  if (c.l2.hit_latency < c.xbar.latency) {
    fail_between("l2.hit_latency", {"xbar.latency"},
                 format_duration(c.l2.hit_latency) + " is less than xbar.latency (" +
                     format_duration(c.xbar.latency) + "); a hit includes the crossbar traversal");
  }
  if (c.hbm.interleave.count % c.l2.sector_size.count != 0) {
    fail_between("hbm.interleave", {"l2.sector_size"},
                 format_bytes(c.hbm.interleave) + " is not a multiple of l2.sector_size (" +
                     format_bytes(c.l2.sector_size) + ")");
  }
}

}  // namespace

std::string presets_dir() { return std::string(MEMWALL_SOURCE_DIR) + "/configs"; }

std::vector<PresetInfo> list_presets() {
  std::vector<PresetInfo> out;
  for (const std::string sub : {"", "hypothetical", "calibrated"}) {
    const fs::path dir = sub.empty() ? fs::path(presets_dir()) : fs::path(presets_dir()) / sub;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<PresetInfo> group;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      if (!e.is_regular_file() || e.path().extension() != ".yaml") continue;
      const std::string stem = e.path().stem().string();
      // A calibrated config is named after its chip: configs/calibrated/h200.yaml is h200-calibrated.
      const std::string id = sub.empty()           ? stem
                             : sub == "calibrated" ? stem + "-calibrated"
                                                   : sub + "/" + stem;
      group.push_back({id, e.path().string()});
    }
    std::sort(group.begin(), group.end(),
              [](const PresetInfo& a, const PresetInfo& b) { return a.id < b.id; });
    out.insert(out.end(), group.begin(), group.end());
  }
  return out;
}

std::string resolve_config_path(const std::string& path_or_preset) {
  std::error_code ec;
  if (fs::is_regular_file(path_or_preset, ec)) return path_or_preset;
  if (fs::is_directory(path_or_preset, ec)) {
    throw ConfigError(
        SourcePos{path_or_preset, 0, 0}, "",
        "is a directory, not a config file (give a YAML file in it, or a preset name: " +
            known_presets_text() + ")");
  }
  if (!looks_like_path(path_or_preset) || path_or_preset.starts_with("hypothetical/") ||
      path_or_preset.starts_with("calibrated/")) {
    std::vector<std::string> candidates{
        presets_dir() + "/" + path_or_preset + ".yaml",
        presets_dir() + "/hypothetical/" + path_or_preset + ".yaml"};
    constexpr std::string_view kCalibrated = "-calibrated";
    if (path_or_preset.ends_with(kCalibrated)) {
      candidates.push_back(presets_dir() + "/calibrated/" +
                           path_or_preset.substr(0, path_or_preset.size() - kCalibrated.size()) +
                           ".yaml");
    }
    for (const std::string& candidate : candidates) {
      if (fs::is_regular_file(candidate, ec)) return candidate;
    }
    throw ConfigError(SourcePos{path_or_preset, 0, 0}, "",
                      "no such file or preset (presets: " + known_presets_text() + ")");
  }
  const bool exists = fs::exists(path_or_preset, ec);
  throw ConfigError(SourcePos{path_or_preset, 0, 0}, "",
                    exists ? "not a regular file" : "no such file");
}

HardwareConfig load_config(const std::string& path_or_preset,
                           const std::vector<std::string>& overrides) {
  // 1. Text layers: the file over its bases, then the overrides.
  const std::string file = resolve_config_path(path_or_preset);
  RawConfig raw;
  raw.root = SourcePos{file, 1, 1};
  std::vector<std::string> chain;
  load_raw(file, raw, chain);
  for (const std::string& o : overrides) apply_override(o, raw);

  // Where a key was set; for a key left at its default, its section or else the file's top.
  auto position_of = [&](const std::string& key) -> SourcePos {
    if (const auto it = raw.values.find(key); it != raw.values.end()) return it->second.pos;
    const auto dot = key.find('.');
    if (dot != std::string::npos) {
      if (const auto it = raw.sections.find(key.substr(0, dot)); it != raw.sections.end()) {
        return it->second;
      }
    }
    return raw.root;
  };

  // Every missing required key at once, at the position of the first (a new config file would
  // otherwise be fixed one error at a time).
  {
    std::vector<const KeyDecl*> missing;
    for (const KeyDecl& key : config_schema()) {
      if (key.store != nullptr && key.required && raw.values.count(std::string(key.path)) == 0) {
        missing.push_back(&key);
      }
    }
    if (missing.size() > 1) {
      std::string list;
      for (const KeyDecl* key : missing)
        list += (list.empty() ? "" : ", ") + std::string(key->path);
      throw ConfigError(position_of(std::string(missing[0]->path)), "",
                        std::to_string(missing.size()) + " required keys are missing: " + list +
                            " (`memwall config reference` gives each one's type and an example)");
    }
  }

  // 2. Typing in table order: sm.clock comes before every value that may be given per cycle.
  HardwareConfig config;
  config.source_file = file;
  Frequency clock;
  for (const KeyDecl& key : config_schema()) {
    if (key.store == nullptr) continue;
    const std::string path(key.path);
    const auto it = raw.values.find(path);
    if (it == raw.values.end() && key.required) {
      throw ConfigError(position_of(path), path,
                        "missing required key (" + std::string(key_type_name(key.type)) +
                            ", e.g. " + std::string(key.example) + ")");
    }
    std::string text = it != raw.values.end() ? it->second.text : std::string(key.default_text);
    if (it == raw.values.end() && key.type == KeyType::kString && text == "\"\"") text.clear();
    double number = 0;
    try {
      const KeyValue value = parse_value(key, text, clock.hertz > 0 ? &clock : nullptr, number);
      if (key.type != KeyType::kString) check_bounds(key, number, text);
      if (key.type == KeyType::kString && key.required && text.empty()) {
        throw UnitError("must not be empty");
      }
      key.store(config, value);
      if (path == "sm.clock") clock = std::get<Frequency>(value);
    } catch (const UnitError& e) {
      throw ConfigError(position_of(path), path, e.what());
    }
  }
  // 3. Cross-field checks, then the topology (reachability, no cycles).
  validate_with_positions(config, position_of);
  try {
    const Topology topology(config);
    (void)topology;
  } catch (const ConfigError& e) {
    throw ConfigError(raw.root, e.key_path(), e.reason());
  }
  return config;
}

/// A key's value in base units, as check_bounds takes it (0 for text).
double base_units(const KeyValue& value) {
  struct {
    double operator()(const std::string&) const { return 0; }
    double operator()(Bytes b) const { return static_cast<double>(b.count); }
    double operator()(Bandwidth b) const { return b.bytes_per_second; }
    double operator()(Frequency f) const { return f.hertz; }
    double operator()(Tick t) const { return static_cast<double>(t); }
    double operator()(std::uint64_t n) const { return static_cast<double>(n); }
    double operator()(double x) const { return x; }
  } visit;
  return std::visit(visit, value);
}

void validate_config(const HardwareConfig& config) {
  const SourcePos file{config.source_file, 0, 0};
  // A config built in code has not been through the parser: each key's range and maximum first,
  // as the loader applies them to the text.
  for (const KeyDecl& key : config_schema()) {
    if (key.fetch == nullptr || key.type == KeyType::kString) continue;
    const KeyValue value = key.fetch(config);
    try {
      check_bounds(key, base_units(value), format_key_value(key, value, config.sm.clock));
    } catch (const UnitError& e) {
      throw ConfigError(file, std::string(key.path), e.what());
    }
  }
  validate_with_positions(config, [&](const std::string&) { return file; });
}

}  // namespace memwall
