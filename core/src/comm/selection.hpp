// Which algorithm computes a collective call: ordered rules like
// "all_reduce:ring;all_gather[0-64K]:rd;*:direct", first match whose algorithm accepts wins,
// "direct" as the last resort. A rule's target may be "auto": the applicable algorithm with the
// lowest estimate (auto_select.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/algorithm.hpp"

namespace tessera::comm {

struct SelectionRule {
  int32_t collective = -1;  // -1: any
  int64_t min_bytes = 0;
  int64_t max_bytes = INT64_MAX;  // inclusive
  std::string algorithm;
};

// Parses rules; "auto" alone stands for "*:auto" (auto_select.hpp). Throws ConfigError for
// malformed text or an unknown collective name, and (when check_names) for an algorithm name no
// loaded plugin provides, listing the known ones, or for a rule naming one collective and an
// algorithm that does not offer it, listing what it offers and which algorithms offer that one.
std::vector<SelectionRule> parse_rules(const std::string& text, bool check_names = true);
std::string rules_text(const std::vector<SelectionRule>& rules);

// Replaces the rules in force. Until something sets them they are TESSERA_COLL's (when set and
// not empty), else the built-in defaults; configure() settles TESSERA_COLL against a file's rules
// before it calls this (api/plugins_api.cpp).
void set_rules(const std::string& text);
std::string current_rules();
// The rules a user set (not the built-in defaults) that name one of `algorithms`, as text; empty
// when none do. Unloading a plugin warns with it: those rules make collectives fail until it is back.
std::string rules_naming(const std::vector<std::string>& algorithms);

// The algorithm for a request of `bytes` per rank, after precondition fallbacks (each logged).
// Throws Error when a user-set rule that matches names an algorithm that is not loaded (its plugin
// was unloaded since): an unknown name is an error, never a silent default.
std::shared_ptr<const CollectiveAlgorithm> choose(const tessera_collective_request& request, int64_t bytes);

// Small all_reduces are bound by latency: recursive doubling takes log2(p) steps to the ring's
// 2(p-1), and up to about 64 KiB per rank its extra bytes cost less than the ring's extra steps
// (as Open MPI's own choice for small messages; bench_mpi_allreduce shows both).
inline constexpr const char* kDefaultRules =
    "all_reduce[0-64K]:rd;all_reduce:ring;all_gather:ring;reduce_scatter:ring;broadcast:tree;reduce:tree;"
    "all_to_all:bruck;*:direct";

}  // namespace tessera::comm
