#pragma once
/// What the command line got wrong, said the way a user can act on: an unknown command or flag
/// is named with the nearest known one. Used by main on any CLI11 parse error.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace memwall {

/// The closest of `candidates` to `word` by edit distance, when it is close enough to be a typo
/// (at most 2 edits, or a third of the word's length); empty otherwise.
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

/// A sentence for what `argv` gets wrong against `app`'s commands and flags: "unknown command 'rn'
/// (did you mean run?)", "unknown option '--seqq' (did you mean --seq?)", or empty when every
/// command and flag is known (the parse error is then about values or missing flags).
std::string explain_parse_error(CLI::App& app, int argc, char** argv);

}  // namespace memwall
