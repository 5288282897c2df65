#include "sim/cli/commands.h"

#include <string>

namespace memwall {

void add_examples(CLI::App& command, const char* examples) {
  command.footer(std::string("Examples:\n") + examples);
}

}  // namespace memwall
