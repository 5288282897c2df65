#include "sim/cli/suggest.h"

#include <algorithm>
#include <string_view>

#include "sim/core/edit_distance.h"

namespace memwall {
namespace {

std::vector<CLI::App*> subcommands_of(CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

std::vector<std::string> names_of(const std::vector<CLI::App*>& apps) {
  std::vector<std::string> out;
  for (const CLI::App* a : apps) out.push_back(a->get_name());
  return out;
}

/// The long flags of `app` (with their dashes), including the help flag.
std::vector<std::string> long_flags_of(CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& n : o->get_lnames()) out.push_back("--" + n);
  }
  return out;
}

std::string did_you_mean(const std::string& guess) {
  return guess.empty() ? std::string() : " (did you mean " + guess + "?)";
}

}  // namespace

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string explain_parse_error(CLI::App& app, int argc, char** argv) {
  CLI::App* current = &app;
  std::string path = "memwall";
  for (int i = 1; i < argc; ++i) {
    const std::string token = argv[i];
    if (token == "--") break;
    if (token.starts_with("--")) {
      const std::string name = token.substr(0, token.find('='));
      const std::vector<std::string> flags = long_flags_of(*current);
      // Flags of the top level (-v) are accepted after a command too (fallthrough).
      const std::vector<std::string> top = long_flags_of(app);
      if (std::find(flags.begin(), flags.end(), name) == flags.end() &&
          std::find(top.begin(), top.end(), name) == top.end()) {
        return "unknown option '" + name + "' for '" + path + "'" +
               did_you_mean(nearest(name, flags));
      }
      continue;
    }
    if (token.starts_with("-")) continue;
    const std::vector<CLI::App*> subs = subcommands_of(*current);
    const auto it = std::find_if(subs.begin(), subs.end(),
                                 [&](const CLI::App* s) { return s->get_name() == token; });
    if (it != subs.end()) {
      current = *it;
      path += " " + token;
      continue;
    }
    // A word where a command is required is an unknown command; elsewhere it is a value.
    if (!subs.empty() && current->get_require_subcommand_min() > 0 &&
        current->get_subcommands().empty()) {
      return "unknown command '" + token + "' for '" + path + "'" +
             did_you_mean(nearest(token, names_of(subs))) + "; `" + path + " --help` lists them";
    }
  }
  return {};
}

}  // namespace memwall
