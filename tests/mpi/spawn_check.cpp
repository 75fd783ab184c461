// Runs under mpirun (tests/mpi/CMakeLists.txt): ts::spawn across the processes init_world() joins
// (P processes x TESSERA_RANKS_PER_PROCESS ranks), each process running its hosted ranks, against
// the same programs spawned in this process over a simulated world of the same size. Every result
// of every hosted rank must be bitwise equal to the in-process one; a few are also checked against
// formulas that do not go through Tessera's collectives.
//
//   spawn_check [programs]   the equality sweep (default): collectives over the world and over groups
//                            that do and do not span processes, collectives of different groups met
//                            in different orders by different processes, a ring of tagged sends,
//                            isend/irecv, batch_isend_irecv, and a Schedule1F1B pipeline step
//   spawn_check throw        the last rank throws (every process must exit with an error naming it)
//   spawn_check deadlock     every rank receives first (every process: a deadlock naming each wait)
//   spawn_check mismatch     rank 0 all_reduces where the others broadcast (an error naming both)
//   spawn_check wrong_size   ts::spawn with one rank more than the world has (an error)
//   spawn_check leftover     rank 0 sends to the last rank, which never receives (an error)
//   spawn_check slow_peer    the last rank sleeps past the world's timeout before a collective (the
//                            other processes end with an error naming what their ranks wait in)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "compare.hpp"

namespace ts = tessera;
namespace nn = tessera::nn;
namespace pp = tessera::pipelining;

namespace {

mpi_check::Tally tally;

// Distinct values per rank, element and salt, with enough mantissa that reduction order shows.
ts::Tensor values_of(int rank, int64_t n, int salt) {
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i)
    v.push_back(static_cast<float>(((rank * 7919 + i * 104729 + salt * 131) % 1000) / 7.0 - 60.3));
  return ts::from_values(v, {n});
}

// Each rank's results, by rank (a process fills those of the ranks it runs).
using Results = std::vector<std::vector<ts::Tensor>>;
using Program = std::function<std::vector<ts::Tensor>(int rank, int n)>;

Results run(int n, const Program& program) {
  Results results(static_cast<size_t>(n));
  ts::spawn(n, [&](int rank) {
    std::vector<ts::Tensor> out = program(rank, n);
    for (ts::Tensor& t : out) t = t.detach().clone();
    results[static_cast<size_t>(rank)] = std::move(out);
  });
  return results;
}

// The program spawned across the processes and, in a simulated world of the same size, in this one.
void compare(const std::string& name, const ts::World& world, const Program& program) {
  ++tally.cases;
  const Results across = run(world.size(), program);
  Results here;
  {
    ts::LocalMode simulated(world.size());  // a spawn inside it runs every rank in this process
    here = run(world.size(), program);
  }
  for (int r : world.ranks()) {
    const auto& got = across[static_cast<size_t>(r)];
    const auto& want = here[static_cast<size_t>(r)];
    if (got.size() != want.size()) {
      tally.fail(name + ": rank " + std::to_string(r) + " returned " + std::to_string(got.size()) +
                 " result(s) across processes, " + std::to_string(want.size()) + " in one");
      continue;
    }
    for (size_t k = 0; k < got.size(); ++k)
      if (!mpi_check::same_bits(got[k], want[k]))
        tally.fail(name + ": result " + std::to_string(k) + " of rank " + std::to_string(r) +
                   " differs from the in-process spawn\n  got      " + got[k].to_string() + "\n  expected " +
                   want[k].to_string());
  }
}

// Checks a result against a value computed without Tessera's collectives.
void expect(const std::string& name, const ts::Tensor& got, const std::vector<float>& want) {
  ++tally.cases;
  if (got.to_vector<float>() != want) tally.fail(name + ": got " + got.to_string());
}

// Halves {0..n/2-1} and {n/2..n-1}, and parities {even}, {odd}: with k ranks per process one of
// them stays within processes when k is even, and the other spans them.
std::vector<int> half_of(int rank, int n) {
  std::vector<int> members;
  const int half = n / 2;
  for (int r = rank < half ? 0 : half; r < (rank < half ? half : n); ++r) members.push_back(r);
  return members;
}
std::vector<int> parity_of(int rank, int n) {
  std::vector<int> members;
  for (int r = rank % 2; r < n; r += 2) members.push_back(r);
  return members;
}

std::vector<ts::Tensor> collectives(int rank, int n) {
  const int64_t m = 5;
  ts::Tensor sum = values_of(rank, m, 1), mx = values_of(rank, m, 2), avg = values_of(rank, m, 3);
  ts::dist::all_reduce(sum);
  ts::dist::all_reduce(mx, ts::ReduceOp::MAX);
  ts::dist::all_reduce(avg, ts::ReduceOp::AVG);
  ts::Tensor bcast = values_of(rank, m, 4);
  ts::dist::broadcast(bcast, n - 1);
  ts::Tensor reduced = values_of(rank, m, 5);
  ts::dist::reduce(reduced, n / 2);
  ts::Tensor gathered = ts::zeros({m * n});
  ts::dist::all_gather_into_tensor(gathered, values_of(rank, m, 6));
  ts::Tensor scattered = ts::zeros({m});
  ts::dist::reduce_scatter_tensor(scattered, values_of(rank, m * n, 7));
  std::vector<ts::Tensor> to_all, from_all;
  for (int j = 0; j < n; ++j) {
    to_all.push_back(values_of(rank, 3, 8 + j));
    from_all.push_back(ts::zeros({3}));
  }
  ts::dist::all_to_all(from_all, to_all);
  std::vector<ts::Tensor> pieces;
  if (rank == 0)
    for (int j = 0; j < n; ++j) pieces.push_back(values_of(100, 2, 20 + j));
  ts::Tensor piece = ts::zeros({2});
  ts::dist::scatter(piece, pieces, 0);
  std::vector<ts::Tensor> collected;
  if (rank == n - 1)
    for (int j = 0; j < n; ++j) collected.push_back(ts::zeros({2}));
  ts::dist::gather(collected, values_of(rank, 2, 30), n - 1);
  ts::dist::barrier();
  std::vector<ts::Tensor> out = {sum, mx, avg, bcast, reduced, gathered, scattered, piece};
  out.insert(out.end(), from_all.begin(), from_all.end());
  out.insert(out.end(), collected.begin(), collected.end());
  return out;
}

std::vector<ts::Tensor> groups(int rank, int n) {
  const ts::ProcessGroup half(half_of(rank, n));
  const ts::ProcessGroup parity(parity_of(rank, n));
  ts::Tensor a = values_of(rank, 4, 40), b = values_of(rank, 4, 41), c = values_of(rank, 4, 42);
  ts::dist::all_reduce(a, ts::ReduceOp::SUM, half);
  ts::dist::all_reduce(b, ts::ReduceOp::SUM, parity);
  ts::dist::broadcast(c, 0, parity);  // group rank 0: the parity's lowest rank
  ts::Tensor g = ts::zeros({4 * static_cast<int64_t>(half_of(rank, n).size())});
  ts::dist::all_gather_into_tensor(g, values_of(rank, 4, 43), half);
  // The whole world's group given as a list: the same fibre as the default group.
  std::vector<int> everyone;
  for (int r = 0; r < n; ++r) everyone.push_back(r);
  ts::Tensor d = values_of(rank, 4, 44);
  ts::dist::all_reduce(d, ts::ReduceOp::SUM, ts::ProcessGroup(everyone));
  return {a, b, c, g, d};
}

// Ranks reach collectives of two groups in opposite orders: the even ranks meet their parity
// group first, the odd ones wait for a message from an even rank, which it sends only once its own
// parity collective is done. Processes then hold different collectives ready at different times;
// each must still run them in one order with the others.
std::vector<ts::Tensor> reordered(int rank, int n) {
  if (n < 2) return {};
  const ts::ProcessGroup parity(parity_of(rank, n));
  ts::Tensor p = values_of(rank, 3, 50), w = values_of(rank, 3, 51);
  ts::Tensor note = ts::zeros({1});
  if (rank % 2 == 0) {
    ts::dist::all_reduce(p, ts::ReduceOp::SUM, parity);
    if (rank + 1 < n) ts::dist::send(p.narrow(0, 0, 1), rank + 1, 5);
  } else {
    ts::dist::recv(note, rank - 1, 5);
    ts::dist::all_reduce(p, ts::ReduceOp::SUM, parity);
  }
  ts::dist::all_reduce(w);
  return {p, w, note};
}

std::vector<ts::Tensor> ring(int rank, int n) {
  if (n < 2) return {};
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  // Tag 2 goes first, then tag 1 and tag -3; the receiver asks for them in another order.
  ts::dist::send(ts::full({2}, static_cast<float>(rank * 100 + 2)), next, 2);
  ts::dist::send(ts::full({2}, static_cast<float>(rank * 100 + 1)), next, 1);
  ts::dist::send(values_of(rank, 3, 60), next, -3);
  ts::Tensor one = ts::zeros({2}), two = ts::zeros({2}), three = ts::zeros({3});
  ts::dist::recv(one, prev, 1);
  ts::dist::recv(three, prev, -3);
  ts::dist::recv(two, prev, 2);
  expect("ring: tag 1 on rank " + std::to_string(rank), one, {prev * 100.f + 1, prev * 100.f + 1});
  expect("ring: tag 2 on rank " + std::to_string(rank), two, {prev * 100.f + 2, prev * 100.f + 2});
  return {one, two, three};
}

std::vector<ts::Tensor> nonblocking(int rank, int n) {
  if (n < 2) return {};
  const int partner = rank ^ 1;  // none for the last rank of an odd world
  ts::Tensor in = ts::zeros({4});
  if (partner < n) {
    ts::dist::Work received = ts::dist::irecv(in, partner, 9);
    ts::dist::isend(values_of(rank, 4, 70), partner, 9).wait();
    received.wait();
  }
  // Every rank to the one after it and from the one before, in one batch.
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  ts::Tensor from_prev = ts::zeros({3});
  std::vector<ts::dist::P2POp> ops = {ts::dist::P2POp(ts::dist::irecv, from_prev, prev, 11),
                                      ts::dist::P2POp(ts::dist::isend, values_of(rank, 3, 71), next, 11)};
  for (ts::dist::Work& work : ts::dist::batch_isend_irecv(ops)) work.wait();
  return {in, from_prev};
}

// A Schedule1F1B step of a 4-layer MLP over n stages (n = 2 or 4), one stage per rank.
constexpr int kLayers = 4;
constexpr int64_t kWidths[kLayers + 1] = {3, 5, 4, 6, 2};

nn::Sequential mlp_chunk(int first, int last) {
  nn::Sequential chunk;
  for (int i = first; i < last; ++i) {
    nn::Linear linear(kWidths[i], kWidths[i + 1]);
    {
      const ts::NoGradGuard off;
      for (ts::Tensor t : {linear->weight.tensor(), linear->bias.tensor()}) {
        std::vector<float> v(static_cast<size_t>(t.numel()));
        for (size_t k = 0; k < v.size(); ++k)
          v[k] = static_cast<float>(0.4 * std::sin(1.3 * (k + 1) + i * 0.7));
        t.copy_(ts::from_values(v, t.sizes()));
      }
    }
    chunk->push_back(linear);
    if (i != kLayers - 1) chunk->push_back(nn::ReLU());
  }
  return chunk;
}

ts::Tensor batch(int64_t rows, int64_t cols, int salt) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (size_t k = 0; k < v.size(); ++k)
    v[k] = static_cast<float>(std::cos(0.37 * static_cast<double>(k) + salt));
  return ts::from_values(v, {rows, cols});
}

std::vector<ts::Tensor> pipeline(int rank, int n) {
  const int per_stage = kLayers / n;
  nn::Sequential chunk = mlp_chunk(rank * per_stage, (rank + 1) * per_stage);
  pp::PipelineStage stage(chunk, rank, n);
  pp::Schedule1F1B schedule(
      stage, 4, [](const ts::Tensor& out, const ts::Tensor& target) { return ts::mse_loss(out, target); });
  std::vector<ts::Tensor> out;
  if (rank == 0) {
    schedule.step(batch(10, kWidths[0], 1));
  } else if (rank == n - 1) {
    std::vector<ts::Tensor> losses;
    out.push_back(schedule.step({}, batch(10, kWidths[kLayers], 2), &losses));
    out.insert(out.end(), losses.begin(), losses.end());
  } else {
    schedule.step();
  }
  for (const nn::Parameter& p : chunk->parameters()) out.push_back(p.tensor().grad());
  return out;
}

void sweep(const ts::World& world, const std::string& only) {
  const int n = world.size();
  if (only.rfind("only:", 0) == 0) {  // a debugging aid: spawn_check only:ring,pipeline
    const std::vector<std::pair<std::string, Program>> all = {
        {"collectives", collectives}, {"groups", groups},    {"reordered", reordered}, {"ring", ring},
        {"nonblocking", nonblocking}, {"pipeline", pipeline}};
    for (const auto& [name, program] : all)
      if (only.find(name) != std::string::npos) compare(name, world, program);
    return;
  }
  compare("collectives", world, collectives);
  compare("groups", world, groups);
  compare("reordered", world, reordered);
  compare("ring", world, ring);
  compare("nonblocking", world, nonblocking);
  if (n == 2 || n == 4) compare("pipeline 1F1B", world, pipeline);
  // An integer sum across processes against its formula: sum over ranks of (rank + 1) * 10.
  const Results sums = run(n, [](int rank, int) {
    ts::Tensor t = ts::full({2}, static_cast<float>((rank + 1) * 10));
    ts::dist::all_reduce(t);
    return std::vector<ts::Tensor>{t};
  });
  const float total = 10.f * n * (n + 1) / 2;
  for (int r : world.ranks()) expect("sum formula", sums[static_cast<size_t>(r)].at(0), {total, total});
}

int failure_mode(const std::string& mode, const ts::World& world) {
  const int n = world.size();
  if (mode == "throw") {
    run(n, [](int rank, int size) -> std::vector<ts::Tensor> {
      ts::Tensor t = ts::full({1}, 1.f);
      if (rank == size - 1) throw ts::Error("spawn_check: rank " + std::to_string(rank) + " gives up");
      ts::dist::all_reduce(t);  // the other ranks wait here for the one that threw
      return {t};
    });
  } else if (mode == "deadlock") {
    run(n, [](int rank, int size) -> std::vector<ts::Tensor> {
      ts::Tensor t = ts::zeros({1});
      ts::dist::recv(t, (rank + 1) % size, 4);
      return {t};
    });
  } else if (mode == "mismatch") {
    run(n, [](int rank, int size) -> std::vector<ts::Tensor> {
      ts::Tensor t = ts::full({3}, 1.f);
      if (rank == 0)
        ts::dist::all_reduce(t);
      else
        ts::dist::broadcast(t, size - 1);
      return {t};
    });
  } else if (mode == "slow_peer") {
    run(n, [](int rank, int size) -> std::vector<ts::Tensor> {
      ts::Tensor t = ts::full({1}, 1.f);
      // Longer than the world's timeout (2 s in its test): the others give up waiting for it.
      if (rank == size - 1) std::this_thread::sleep_for(std::chrono::seconds(8));
      ts::dist::all_reduce(t);
      return {t};
    });
  } else if (mode == "wrong_size") {
    ts::spawn(n + 1, [](int) {});
  } else if (mode == "leftover") {
    run(n, [](int rank, int size) -> std::vector<ts::Tensor> {
      if (rank == 0) ts::dist::send(ts::full({1}, 1.f), size - 1, 6);
      return {};
    });
  } else {
    std::fprintf(stderr, "spawn_check: unknown mode '%s'\n", mode.c_str());
    return 2;
  }
  std::printf("FAIL: spawn_check %s returned without an error\n", mode.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "programs";
  int process = -1;
  try {
    const ts::World world = ts::init_world();
    process = world.process_index();
    if (mode != "programs" && mode.rfind("only:", 0) != 0) return failure_mode(mode, world);
    sweep(world, mode);
    return tally.report("spawn_check", world.process_index());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spawn_check on process %d: %s\n", process, e.what());
    return 1;
  }
}
