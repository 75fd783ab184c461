// libFuzzer target: the arguments of `tessera plan` (one per line of the input), parsed and checked
// exactly as the tool does before it runs anything (tools/tessera/plan_arguments.cpp). Any input
// must give a request or a UsageError; a request must be one the tool can run within its limits:
// at most kPlanMaxRanks ranks, (ranks + 1) x the tensor within kPlanMaxMemory, one placement per
// mesh dim, and every shard dim inside the shape.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "commands.hpp"
#include "plan_arguments.hpp"

namespace {

namespace cli = tessera::cli;

[[noreturn]] void broken(const std::string& what, const std::string& input) {
  std::fprintf(stderr, "plan_arguments_fuzzer: %s\narguments, one per line:\n%s\n", what.c_str(), input.c_str());
  std::abort();
}

void check(const cli::PlanRequest& r, const std::string& input) {
  int64_t world = 1;
  for (int64_t size : r.mesh_shape) {
    if (size < 1) broken("a mesh size below 1", input);
    world *= size;  // bounded: every partial product was checked against kPlanMaxRanks
  }
  if (world != r.world || world > cli::kPlanMaxRanks) broken("a world over the limit or miscounted", input);
  if (r.bytes < 0 || r.bytes > cli::kPlanMaxMemory / (r.world + 1))
    broken("a tensor over the memory limit", input);
  if (!r.names.empty() && r.names.size() != r.mesh_shape.size()) broken("names do not match the mesh", input);
  const auto n = static_cast<int64_t>(r.shape.size());
  for (const tessera::Placements* placements : {&r.from, &r.to}) {
    if (placements->size() != r.mesh_shape.size()) broken("placements do not match the mesh", input);
    for (const tessera::Placement& p : *placements)
      if (p.is_shard() && (p.dim() < -n || p.dim() >= n)) broken("a shard dim outside the shape", input);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args;
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos && args.size() < 64; start = end + 1)
    args.push_back(text.substr(start, end - start));
  if (start < text.size() && args.size() < 64) args.push_back(text.substr(start));
  try {
    check(cli::parse_plan_arguments(args), text);
  } catch (const cli::UsageError&) {
  } catch (const std::exception& e) {
    broken(std::string("escaped exception: ") + e.what(), text);
  }
  return 0;
}
