#include "sim/cli/commands.h"

#include <string>

namespace memwall {

void add_examples(CLI::App& command, const char* examples) {
  command.footer(std::string("Examples:\n") + examples);
}

CLI::Validator positive_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
          return "must be a positive integer, got " + text;
        }
        return {};
      },
      "INT");
}

}  // namespace memwall
