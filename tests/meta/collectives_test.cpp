// Collectives on local meta tensors: the same calls as on cpu local tensors give outputs of the
// same shapes and dtypes (on meta), and the comm counters and traces see the same collectives, the
// same algorithms, bytes and cost-model times: only the data movement is skipped.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "meta_test_support.hpp"

using namespace meta_test;

namespace {

struct Outcome {
  std::vector<ts::Tensor> tensors;  // every output the program wrote, in order
  std::vector<ts::CommCounter::Entry> counted;
};

// One rank's shard of `rows` x 3; rank r of uneven programs gets r + 1 rows.
ts::Tensor local(const std::string& b, int64_t rows, ts::DType dtype = ts::kFloat32) {
  return ts::randn({rows, 3}, on(b, ts::kFloat64)).to(dtype);
}

// Every collective of tessera::dist on a world of `world` ranks, on backend `b`.
Outcome run_collectives(const std::string& b, int world) {
  ts::LocalMode mode(world);
  const ts::CommCounter counter;
  Outcome out;
  const auto p = static_cast<int64_t>(world);

  ts::Tensor reduced = local(b, 4);
  ts::dist::all_reduce(reduced);
  ts::Tensor averaged = local(b, 2);
  ts::dist::all_reduce(averaged, ts::ReduceOp::AVG);
  ts::Tensor maxed = local(b, 2, ts::kInt64);
  ts::dist::all_reduce(maxed, ts::ReduceOp::MAX);
  ts::Tensor broadcast = local(b, 5);
  ts::dist::broadcast(broadcast, p - 1);
  ts::Tensor reduce = local(b, 1);
  ts::dist::reduce(reduce, 0, ts::ReduceOp::PRODUCT);
  out.tensors = {reduced, averaged, maxed, broadcast, reduce};

  std::vector<ts::Tensor> gathered;
  for (int64_t i = 0; i < p; ++i) gathered.push_back(ts::empty({2, 3}, on(b)));
  ts::dist::all_gather(gathered, local(b, 2));
  ts::Tensor gathered_tensor = ts::empty({2 * p, 3}, on(b));
  ts::dist::all_gather_into_tensor(gathered_tensor, local(b, 2));
  ts::Tensor scattered = ts::empty({2, 3}, on(b));
  std::vector<ts::Tensor> pieces;
  for (int64_t i = 0; i < p; ++i) pieces.push_back(local(b, 2));
  ts::dist::reduce_scatter(scattered, pieces);
  ts::Tensor scattered_tensor = ts::empty({1, 3}, on(b));
  ts::dist::reduce_scatter_tensor(scattered_tensor, local(b, p), ts::ReduceOp::MIN);
  std::vector<ts::Tensor> exchanged;
  for (int64_t i = 0; i < p; ++i) exchanged.push_back(ts::empty({1, 3}, on(b)));
  std::vector<ts::Tensor> sends;
  for (int64_t i = 0; i < p; ++i) sends.push_back(local(b, 1));
  ts::dist::all_to_all(exchanged, sends);
  ts::Tensor exchanged_single = ts::empty({p, 3}, on(b));
  ts::dist::all_to_all_single(exchanged_single, local(b, p));
  ts::Tensor scattered_from_root = ts::empty({2, 3}, on(b));
  ts::dist::scatter(scattered_from_root, pieces, 0);
  std::vector<ts::Tensor> gathered_at_root;
  for (int64_t i = 0; i < p; ++i) gathered_at_root.push_back(ts::zeros({2, 3}, on(b)));
  ts::dist::gather(gathered_at_root, local(b, 2), 0);
  ts::dist::barrier(reduced);
  for (const auto* list : {&gathered, &exchanged, &gathered_at_root})
    out.tensors.insert(out.tensors.end(), list->begin(), list->end());
  for (const ts::Tensor& t :
       {gathered_tensor, scattered, scattered_tensor, exchanged_single, scattered_from_root})
    out.tensors.push_back(t);

  // Uneven shards: rank r holds r + 1 rows; all_to_all_single with per-rank splits (rank r sends
  // r + 1 rows to every rank: receives from j are j + 1 rows).
  ts::Tensor uneven = ts::rank_map([&](int r) { return ts::randn({(r + 1) * p, 3}, on(b)); });
  std::vector<int64_t> receives;
  int64_t received = 0;
  for (int64_t j = 0; j < p; ++j) receives.push_back(j + 1), received += j + 1;
  std::vector<ts::SymInt> input_splits, output_splits;
  for (int64_t j = 0; j < p; ++j) {
    input_splits.emplace_back(ts::current_rank() + 1);
    output_splits.emplace_back(receives[static_cast<size_t>(j)]);
  }
  ts::Tensor uneven_out = ts::empty({received, 3}, on(b));
  ts::dist::all_to_all_single(uneven_out, uneven, output_splits, input_splits);
  out.tensors.push_back(uneven_out);

  // Point to point: each rank sends to the next one.
  if (world > 1) {
    ts::Tensor message = local(b, 2);
    ts::Tensor inbox = ts::empty({2, 3}, on(b));
    ts::dist::send(message, (ts::current_rank() + 1) % world);
    ts::dist::recv(inbox, (ts::current_rank() + world - 1) % world);
    out.tensors.push_back(inbox);
  }
  out.counted = counter.entries();
  return out;
}

}  // namespace

TEST_CASE("every collective on meta local tensors matches cpu in shapes and in what is counted") {
  for (int world : {1, 3, 7}) {
    CAPTURE(world);
    const Outcome cpu = run_collectives("cpu", world);
    const Outcome meta = run_collectives("meta", world);
    REQUIRE(meta.tensors.size() == cpu.tensors.size());
    for (size_t i = 0; i < cpu.tensors.size(); ++i) {
      CAPTURE(i);
      check_same_layout(cpu.tensors[i], meta.tensors[i]);
    }
    // Shapes worked out by hand: all_gather_into_tensor gives 2p rows, the uneven all_to_all_single
    // 1 + 2 + ... + p rows.
    CHECK(meta.tensors[5 + 3 * static_cast<size_t>(world)].sizes() == ts::Shape{2 * world, 3});
    const size_t uneven = cpu.tensors.size() - (world > 1 ? 2 : 1);
    CHECK(meta.tensors[uneven].sizes() == ts::Shape{world * (world + 1) / 2, 3});
    std::string listed;
    int64_t calls = 0;
    for (const ts::CommCounter::Entry& e : cpu.counted) {
      listed += " " + e.collective + "x" + std::to_string(e.calls);
      calls += e.calls;
    }
    CAPTURE(listed);
    check_same_entries(cpu.counted, meta.counted);
    // Issued above: all_reduce x3, broadcast, reduce, all_gather x2, reduce_scatter x2, all_to_all,
    // all_to_all_single x2, scatter, gather, barrier.
    CHECK(calls == 15);
  }
}

TEST_CASE("a collective mixing meta and cpu shards is an error naming both backends") {
  ts::LocalMode mode(2);
  ts::Tensor gathered = ts::empty({4, 3}, on("meta"));
  const ts::Tensor input = ts::randn({2, 3});
  const std::string message = error_of([&] { ts::dist::all_gather_into_tensor(gathered, input); });
  CHECK(contains(message, "'meta'"));
  CHECK(contains(message, "'cpu'"));
}

TEST_CASE("a trace of meta collectives records the same collective steps as cpu's") {
  auto steps = [](const std::string& b) {
    const std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("tessera_meta_trace_" + b + ".json");
    {
      ts::LocalMode mode(4);
      const ts::TraceScope trace(path.string());
      ts::Tensor t = ts::randn({64}, on(b));
      ts::dist::all_reduce(t);
      ts::Tensor g = ts::empty({256}, on(b));
      ts::dist::all_gather_into_tensor(g, t);
    }
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::filesystem::remove(path);
    // Collective steps are the slices carrying bytes and a peer (see tessera/observe.hpp).
    int64_t count = 0;
    for (size_t at = text.str().find("\"peer\""); at != std::string::npos;
         at = text.str().find("\"peer\"", at + 1))
      ++count;
    return count;
  };
  const int64_t cpu = steps("cpu");
  CHECK(cpu > 0);
  CHECK(steps("meta") == cpu);
}
