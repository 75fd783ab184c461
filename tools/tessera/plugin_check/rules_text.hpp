// Collective selection rules as text ("all_reduce:ring;all_gather[0-64K]:rd;*:direct"), as
// ts::dist::set_algorithms takes them.
#pragma once

#include <string>

namespace tessera::cli::check {

// `rules` without the rules that select `algorithm`; the others kept in order, trimmed.
std::string rules_without(const std::string& rules, const std::string& algorithm);

}  // namespace tessera::cli::check
