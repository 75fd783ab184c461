// libFuzzer target: the arguments of `tessera plan` (one per line of the input), parsed and checked
// exactly as the tool does before it runs anything (tools/tessera/plan_arguments.cpp). Any input
// must give a request or a UsageError; a request must be one the tool can run within its limits:
// at most kPlanMaxRanks ranks, (ranks + 1) x the tensor within kPlanMaxMemory, one placement per
// mesh dim, and every shard dim inside the shape. A model plan (--model) must be one the model and
// its layout accept: sizes of at least 1, heads dividing the width, kv heads dividing heads, an even
// head width for the transformer, a tensor-parallel dim dividing heads, kv heads and the sequence,
// a data-parallel dim dividing the batch, fsdp+tp exactly for a transformer on a 2-d mesh.
#include <algorithm>
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
  std::fprintf(stderr, "plan_arguments_fuzzer: %s\narguments, one per line:\n%s\n", what.c_str(),
               input.c_str());
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

bool fits(int64_t a, int64_t b) {
  int64_t out = 0;
  return !__builtin_mul_overflow(a, b, &out);
}

void check_model(const cli::ModelPlan& m, const std::string& input) {
  if (m.mesh_shape.empty() || m.mesh_shape.size() > 2) broken("a model mesh of neither 1 nor 2 dims", input);
  int64_t world = 1;
  for (int64_t size : m.mesh_shape) {
    if (size < 1) broken("a mesh size below 1", input);
    world *= size;
  }
  if (world != m.world || world > cli::kPlanMaxRanks) broken("a world over the limit or miscounted", input);
  if (m.names.size() != m.mesh_shape.size()) broken("names do not match the mesh", input);
  for (const std::string& name : m.names)
    if (name.empty() || std::count(m.names.begin(), m.names.end(), name) != 1)
      broken("names not distinct", input);
  for (int64_t size : {m.layers, m.hidden, m.ffn, m.heads, m.seq, m.batch})
    if (size < 1) broken("a model size below 1", input);
  if (m.layers > 4096) broken("more than 4096 layers", input);
  if (m.hidden % m.heads != 0) broken("heads do not divide the width", input);
  if (!fits(m.batch, m.seq) || !fits(m.hidden, m.ffn) || !fits(m.batch * m.seq, m.ffn))
    broken("a tensor size that overflows", input);
  const bool two_d = m.mesh_shape.size() == 2;
  const bool transformer = m.model == cli::ModelKind::Transformer;
  if ((m.strategy == cli::Strategy::FsdpTp) != (transformer && two_d))
    broken("fsdp+tp outside a transformer on a 2-d mesh, or a 2-d transformer without it", input);
  if (!transformer) return;
  if (m.kv_heads < 1 || m.vocab < 1) broken("a transformer size below 1", input);
  if (m.heads % m.kv_heads != 0) broken("kv heads do not divide heads", input);
  if ((m.hidden / m.heads) % 2 != 0) broken("an odd head width", input);
  if (!fits(m.vocab, m.hidden) || !fits(m.batch * m.seq, m.vocab))
    broken("a transformer size that overflows", input);
  if (m.strategy == cli::Strategy::Megatron || m.strategy == cli::Strategy::FsdpTp) {
    const int64_t tp = m.mesh_shape.back();
    if (m.heads % tp != 0 || m.kv_heads % tp != 0 || m.seq % tp != 0)
      broken("a tensor-parallel dim that splits a head or a position", input);
  }
  if (m.strategy != cli::Strategy::Megatron && m.batch % m.mesh_shape.front() != 0)
    broken("a data-parallel dim that does not divide the batch", input);
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
    const cli::PlanOptions options = cli::parse_plan_options(args);
    if (options.model.empty())
      check(cli::check_plan(options), text);
    else
      check_model(cli::check_model_plan(options), text);
  } catch (const cli::UsageError&) {
  } catch (const std::exception& e) {
    broken(std::string("escaped exception: ") + e.what(), text);
  }
  return 0;
}
