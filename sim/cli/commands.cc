#include "sim/cli/commands.h"

#include <string>

#include "sim/core/error.h"
#include "sim/core/memory_budget.h"

namespace memwall {

Bytes max_memory_option(const std::string& text) {
  return memory_limit_option(text, "--max-memory");
}

void add_examples(CLI::App& command, const char* examples) {
  command.footer(std::string("Examples:\n") + examples);
}

CLI::Validator positive_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.find(',') != std::string::npos) {
          return "takes one number, got the list " + text +
                 " (lists of values are for memwall sweep and memwall io)";
        }
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
          return "must be a positive integer, got " + text;
        }
        return {};
      },
      "INT");
}

void refuse_empty_file_names(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    const std::string type = opt->get_type_name();
    const std::string name = opt->get_name();
    const bool file = type.find("FILE") != std::string::npos || type == "TRACE" ||
                      name.find("--output") != std::string::npos ||
                      name.find("--json") != std::string::npos ||
                      name.find("--timeline") != std::string::npos;
    if (!file || name.find("--timeline-budget") != std::string::npos) continue;
    opt->check(CLI::Validator(
        [](std::string& text) -> std::string {
          return text.empty()
                     ? std::string("an empty file name (give a path, or leave the option out)")
                     : std::string();
        },
        ""));
  }
  for (CLI::App* sub : app.get_subcommands({})) refuse_empty_file_names(*sub);
}

}  // namespace memwall
