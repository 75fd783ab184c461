// Runs under mpirun (tests/mpi/CMakeLists.txt): the same collectives in the world init_world()
// makes (P processes x TESSERA_RANKS_PER_PROCESS ranks) and in a simulated world of the same size
// in this process, for every loaded algorithm that applies; every hosted rank's result must be
// bitwise equal to the simulated one. Integer all_reduce sums are also checked against a formula.
//
//   world_check [collectives]   the equality sweep (default)
//   world_check mismatch        process 1 calls all_reduce with another shape (expects an error)
//   world_check op_mismatch     process 1 reduces with MAX where the others sum (expects an error)
//   world_check skip            process 1 skips an all_reduce (expects an error)
//   world_check unmatched_recv  rank 0 receives from rank 1, which never sends (expects a timeout)
//   world_check dead_peer       process 1 leaves before the collective (expects a timeout error)
//   world_check hosted          shard() of a remote rank, printing, reconcile across processes
//   world_check avg_mismatch    process 1 averages where the others sum (the messages are alike)
//   world_check shape_mismatch  process 1 all_reduces a [2, 2] where the others have [4]
//   world_check p2p_dtype       rank 1 receives int32 what rank 0 sent as float32
//   world_check p2p_shape       rank 1 receives into [2, 2] what rank 0 sent as [4]
//   world_check disagree        process 1 starts with other settings (2 ranks per process, checks on)
//   world_check stop_peer       process 1 stops itself (SIGSTOP) before the collective
//   world_check kill_peer       process 1 kills itself (SIGKILL) before the collective
//   world_check sum             an all_reduce whose result is checked (for a faulty transport)
//   world_check costed          an all_reduce between two processes whose cost estimate must be the
//                               transport's configured latency and bandwidth (1 ms, 1 MB/s)
//   world_check persistent      repeated all_reduces of one signature replay the first call's
//                               preparation; another shape, op or average prepares anew
//   world_check replay_mismatch two all_reduces of [4], then process 1 all_reduces a [2, 2] while
//                               the others replay [4] (expects an error)
// The failure modes print "FAIL" only when a wrong or unchecked result got through.
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "comm/prepared_call.hpp"
#include "compare.hpp"
#include "world/world.hpp"

namespace ts = tessera;

namespace {

mpi_check::Tally tally;

// Distinct values per rank, element and case, with enough mantissa that reduction order shows.
ts::Tensor values_of(int rank, int64_t n, int salt, ts::DType dtype = ts::kFloat32) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(((rank * 7919 + i * 104729 + salt * 131) % 1000) / 7.0 - 60.3);
  const ts::Tensor t = ts::from_values(v, {n}, ts::TensorOptions(ts::kFloat64));
  return t.to(dtype);
}

using Program = std::function<std::vector<ts::Tensor>(const ts::DeviceMesh&)>;

void compare(const std::string& name, const ts::World& world, const Program& program) {
  mpi_check::compare(tally, name, world,
                     [&] { return program(ts::init_device_mesh("cpu", {world.size()})); });
}

ts::Tensor inputs(int64_t n, int salt, ts::DType dtype = ts::kFloat32) {
  return ts::rank_map([&](int r) { return values_of(r, n, salt, dtype); });
}

void sweep(const ts::World& world) {
  const int w = world.size();
  const std::vector<std::string> collectives = {"all_reduce", "broadcast",      "reduce",
                                                "all_gather", "reduce_scatter", "all_to_all",
                                                "scatter",    "gather",         "barrier"};
  for (const std::string& algorithm : ts::dist::algorithm_names()) {
    for (const std::string& collective : collectives) {
      // 0, 1 and an uneven count (not a multiple of the world size), all sent from the link's
      // staged copies; 1100 floats are more than ProcessLink::kStagedBytes, sent in place.
      for (int64_t per_rank : {int64_t{0}, int64_t{1}, int64_t{w + 2}, int64_t{37}, int64_t{1100}}) {
        if (!ts::dist::verify_schedule(algorithm, collective, w, per_rank).empty()) continue;
        ts::dist::set_algorithms(collective + ":" + algorithm);
        const std::string name = collective + "/" + algorithm + "/" + std::to_string(per_rank);
        const int salt = static_cast<int>(per_rank) + static_cast<int>(collective.size());
        Program program;
        if (collective == "all_reduce")
          program = [&](const ts::DeviceMesh&) {
            ts::Tensor sum = inputs(per_rank, salt), mx = inputs(per_rank, salt + 1),
                       avg = inputs(per_rank, salt + 2);
            ts::dist::all_reduce(sum);
            ts::dist::all_reduce(mx, ts::ReduceOp::MAX);
            ts::dist::all_reduce(avg, ts::ReduceOp::AVG);
            return std::vector<ts::Tensor>{sum, mx, avg};
          };
        else if (collective == "broadcast")
          program = [&](const ts::DeviceMesh&) {
            ts::Tensor t = inputs(per_rank, salt);
            ts::dist::broadcast(t, w - 1);
            return std::vector<ts::Tensor>{t};
          };
        else if (collective == "reduce")
          program = [&](const ts::DeviceMesh&) {
            ts::Tensor t = inputs(per_rank, salt);
            ts::dist::reduce(t, w / 2);
            return std::vector<ts::Tensor>{t};
          };
        else if (collective == "all_gather")
          program = [&](const ts::DeviceMesh&) {
            ts::Tensor in = inputs(per_rank, salt);
            ts::Tensor out = ts::zeros({per_rank * w});
            ts::dist::all_gather_into_tensor(out, in);
            return std::vector<ts::Tensor>{out};
          };
        else if (collective == "reduce_scatter")
          program = [&](const ts::DeviceMesh&) {
            ts::Tensor in = inputs(per_rank * w, salt);
            ts::Tensor out = ts::zeros({per_rank});
            ts::dist::reduce_scatter_tensor(out, in);
            return std::vector<ts::Tensor>{out};
          };
        else if (collective == "all_to_all")
          program = [&](const ts::DeviceMesh&) {
            std::vector<ts::Tensor> in, out;
            for (int j = 0; j < w; ++j) {
              in.push_back(inputs(per_rank, salt + j));
              out.push_back(ts::zeros({per_rank}));
            }
            ts::dist::all_to_all(out, in);
            return out;
          };
        else if (collective == "scatter")
          program = [&](const ts::DeviceMesh&) {
            std::vector<ts::Tensor> in;
            for (int j = 0; j < w; ++j) in.push_back(inputs(per_rank, salt + j));
            ts::Tensor out = ts::zeros({per_rank});
            ts::dist::scatter(out, in, 0);
            return std::vector<ts::Tensor>{out};
          };
        else if (collective == "gather")
          program = [&](const ts::DeviceMesh&) {
            std::vector<ts::Tensor> out;
            for (int j = 0; j < w; ++j) out.push_back(ts::zeros({per_rank}));
            ts::dist::gather(out, inputs(per_rank, salt), w - 1);
            return out;
          };
        else
          program = [&](const ts::DeviceMesh&) {
            ts::Tensor t = inputs(per_rank, salt);
            ts::dist::barrier(t);
            return std::vector<ts::Tensor>{t};
          };
        compare(name, world, program);
        ts::dist::set_algorithms("");
      }
    }
  }
}

// What the default rules pick: groups of a 2-d mesh, all_to_all_single with uneven splits,
// send/recv round a ring, and a DTensor through redistributions.
void structured(const ts::World& world) {
  const int w = world.size();
  compare("send/recv ring", world, [&](const ts::DeviceMesh&) {
    ts::Tensor t = inputs(5, 3);
    ts::Tensor got = ts::zeros({5});
    ts::dist::send(t, (ts::get_rank() + 1) % w);
    ts::dist::recv(got, (ts::get_rank() + (w - 1)) % w);
    return std::vector<ts::Tensor>{got};
  });
  // Tags between processes: sent with tags 2, -5 and 1 in that order, received as 1, 2, -5 (a
  // message of another tag that arrives first waits for its own receive).
  compare("send/recv ring with tags received out of order", world, [&](const ts::DeviceMesh&) {
    const ts::SymInt next = (ts::get_rank() + 1) % w, prev = (ts::get_rank() + (w - 1)) % w;
    ts::dist::send(inputs(3, 4), next, 2);
    ts::dist::send(inputs(2, 5), next, -5);
    ts::dist::send(inputs(3, 6), next, 1);
    ts::Tensor one = ts::zeros({3}), two = ts::zeros({3}), minus_five = ts::zeros({2});
    ts::dist::recv(one, prev, 1);
    ts::dist::recv(two, prev, 2);
    ts::dist::recv(minus_five, prev, -5);
    ts::dist::check_messages();
    return std::vector<ts::Tensor>{one, two, minus_five};
  });
  compare("all_to_all_single uneven", world, [&](const ts::DeviceMesh&) {
    // Rank r sends (r + j) % 3 rows to rank j; rank j receives (i + j) % 3 rows from rank i.
    std::vector<ts::SymInt> in_splits, out_splits;
    for (int j = 0; j < w; ++j) {
      in_splits.push_back((ts::get_rank() + j) % 3);
      out_splits.push_back((ts::get_rank() + j) % 3);
    }
    ts::Tensor input = ts::rank_map([&](int r) {
      int64_t rows = 0;
      for (int j = 0; j < w; ++j) rows += (r + j) % 3;
      return values_of(r, rows * 2, 9).reshape({rows, 2});
    });
    ts::Tensor output = ts::rank_map([&](int r) {
      int64_t rows = 0;
      for (int i = 0; i < w; ++i) rows += (i + r) % 3;
      return ts::zeros({rows, 2});
    });
    ts::dist::all_to_all_single(output, input, out_splits, in_splits);
    return std::vector<ts::Tensor>{output};
  });
  compare("200 small all_reduces in a row (more staged sends than the link keeps pending)", world,
          [&](const ts::DeviceMesh&) {
            ts::Tensor t = inputs(3, 12);
            for (int i = 0; i < 200; ++i) {
              ts::dist::all_reduce(t, ts::ReduceOp::MAX);
              t = t * 0.5 + inputs(3, i);  // a new value every call: a stale message would show
            }
            return std::vector<ts::Tensor>{t};
          });
  compare("all_reduce of shards that share bytes (replicas) and of a mix of sizes", world,
          [&](const ts::DeviceMesh&) {
            ts::Tensor replicated =
                ts::full({29}, 0.75f);  // inside the mode: every hosted rank's shard shares bytes
            const ts::Tensor twin = replicated + 0.0;
            ts::Tensor large = inputs(3000, 13);
            ts::dist::all_reduce(replicated);
            ts::dist::all_reduce(large);
            return std::vector<ts::Tensor>{replicated, twin, large};
          });
  if (w % 2 == 0) {
    compare("mesh dims", world, [&](const ts::DeviceMesh&) {
      const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, w / 2}, {"dp", "tp"});
      ts::Tensor a = inputs(11, 4), b = inputs(11, 5);
      ts::dist::all_reduce(a, ts::ReduceOp::SUM, mesh.group("dp"));
      ts::dist::all_reduce(b, ts::ReduceOp::SUM, mesh.group("tp"));
      return std::vector<ts::Tensor>{a, b};
    });
    compare("dtensor", world, [&](const ts::DeviceMesh&) {
      const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, w / 2}, {"dp", "tp"});
      ts::Tensor global;
      {
        ts::DisabledLocalMode plain;
        global = values_of(0, 7 * 9, 11).reshape({7, 9});  // uneven over every mesh dim
      }
      ts::DTensor d = ts::distribute_tensor(global, mesh, {ts::Shard(0), ts::Shard(1)});
      ts::DTensor moved = d.redistribute({ts::Shard(1), ts::Replicate()});
      ts::DTensor back = moved.redistribute({ts::Replicate(), ts::Shard(0)});
      const ts::Tensor full = back.full_tensor();  // a local tensor: the whole value on every rank
      return std::vector<ts::Tensor>{d.to_local(), moved.to_local(), back.to_local(), full};
    });
  }
  // An independent oracle: rank r holds [r, r + 1, ..., r + 4] (int64); the sum is a formula.
  {
    ++tally.cases;
    ts::LocalMode mode(world);
    ts::Tensor t = ts::rank_map([](int r) { return ts::arange(r, r + 5, 1, ts::TensorOptions(ts::kInt64)); });
    ts::dist::all_reduce(t);
    for (int r : world.ranks())
      for (int64_t i = 0; i < 5; ++i) {
        const int64_t expected = int64_t{w} * (w - 1) / 2 + i * w;
        const int64_t got = t.shard(r).to_vector<int64_t>()[static_cast<size_t>(i)];
        if (got != expected)
          tally.fail("integer all_reduce on rank " + std::to_string(r) + " at " + std::to_string(i) + ": " +
                     std::to_string(got) + ", expected " + std::to_string(expected));
      }
  }
}

int hosted(const ts::World& world) {
  // Outside any mode, the process is a member of the process world (PyTorch: dist.get_rank()).
  if (ts::get_world_size() != world.size()) {
    std::printf("FAIL get_world_size() outside a mode is %d, expected %d\n", ts::get_world_size(),
                world.size());
    return 1;
  }
  const ts::SymInt rank = ts::get_rank();
  const int first = world.process_index() * world.ranks_per_process();
  const bool rank_ok =
      world.ranks_per_process() == 1
          ? !rank.is_local() && rank.as_int() == first
          : rank.is_local() && rank.local().ranks() == world.ranks() && rank.at(first) == first;
  if (!rank_ok) {
    std::printf("FAIL get_rank() outside a mode on process %d is %s\n", world.process_index(),
                rank.to_string().c_str());
    return 1;
  }
  ts::LocalMode mode(world);
  const ts::Tensor t = ts::rank_map([](int r) { return ts::full({2}, r); });
  const int remote = (world.ranks().ranks().front() + world.ranks().size()) % world.size();
  try {
    t.shard(remote);
    std::printf("FAIL shard(%d) of a rank hosted elsewhere did not throw\n", remote);
    return 1;
  } catch (const ts::Error& e) {
    if (std::strstr(e.what(), "hosted by process") == nullptr) {
      std::printf("FAIL shard(%d): unexpected message: %s\n", remote, e.what());
      return 1;
    }
  }
  const std::string text = t.to_string();
  if (text.find("hosted by other processes") == std::string::npos) {
    std::printf("FAIL printing does not mention ranks elsewhere: %s\n", text.c_str());
    return 1;
  }
  const ts::Tensor same = ts::rank_map([](int) { return ts::full({3}, 7.0f); });
  if (!ts::equal(same.reconcile(), ts::full({3}, 7.0f))) return 1;
  // Every shard on this process agrees, but processes differ: reconcile must say so everywhere.
  const ts::Tensor per_process =
      ts::rank_map([&](int) { return ts::full({3}, static_cast<float>(world.process_index())); });
  try {
    per_process.reconcile();
    std::printf("FAIL reconcile of values that differ between processes did not throw\n");
    return 1;
  } catch (const ts::Error& e) {
    if (std::strstr(e.what(), "holds another value") == nullptr) {
      std::printf("FAIL reconcile: unexpected message: %s\n", e.what());
      return 1;
    }
  }
  std::printf("OK hosted-only shards on process %d\n", world.process_index());
  return 0;
}

// Each rank's distinct values summed over every rank, checked element by element against the
// formula; prints the result only when it is right.
int checked_sum(const ts::World& world) {
  ts::LocalMode local(world);
  // Staged messages, then messages sent from their buffers, each size twice (with other values).
  int64_t call = 0;
  for (int64_t n : {int64_t{5}, int64_t{5}, int64_t{3000}, int64_t{3000}}) {
    const int64_t base = ++call * 100000;
    ts::Tensor t = ts::rank_map([n, base](int r) {
      return ts::arange(base + r * 1000, base + r * 1000 + n, 1, ts::TensorOptions(ts::kInt64));
    });
    ts::dist::all_reduce(t);
    const int64_t w = world.size();
    for (int r : world.ranks()) {
      const std::vector<int64_t> got = t.shard(r).to_vector<int64_t>();
      for (int64_t i = 0; i < n; ++i)
        if (got[static_cast<size_t>(i)] != w * (base + i) + 1000 * w * (w - 1) / 2) {
          std::printf("FAIL: wrong sum on rank %d at %lld\n", r, static_cast<long long>(i));
          return 0;
        }
    }
  }
  std::printf("OK sums on process %d\n", world.process_index());
  return 0;
}

// One rank per process, "direct" all_reduce of 1024 float32: one 4096-byte message each way at once
// between the processes, which the cost model must time at the latency and bandwidth transport-mpi
// was configured with ([plugins.transport-mpi] latency = 1e-3, bandwidth = 1e6): 1 ms + 4096 / 1e6 s.
int costed(const ts::World& world) {
  if (world.num_processes() != 2 || world.size() != 2) {
    std::printf("FAIL: costed needs 2 processes of 1 rank, got %d of %d\n", world.num_processes(),
                world.size());
    return 0;
  }
  ts::dist::set_algorithms("*:direct");
  ts::LocalMode local(world);
  ts::Tensor t = ts::rank_map([](int r) { return ts::full({1024}, static_cast<double>(r + 1)); });
  ts::CommCounter counter;
  ts::dist::all_reduce(t);
  const double want = 1e-3 + 4096 / 1e6;
  if (std::abs(counter.seconds() - want) > 1e-9 * want) {
    std::printf("FAIL: the all_reduce between processes was estimated at %.9g s, expected %.9g s\n",
                counter.seconds(), want);
    return 0;
  }
  for (int r : world.ranks())
    if (t.shard(r).to_vector<float>() != std::vector<float>(1024, 3.0f)) {
      std::printf("FAIL: wrong sum on rank %d\n", r);
      return 0;
    }
  std::printf("OK costed on process %d: %.9g s\n", world.process_index(), counter.seconds());
  return 0;
}

// Rank 0 sends a float32 [4]; rank 1 receives into a tensor of another dtype or shape.
int mismatched_send(const ts::World& world, const ts::Shape& shape, ts::DType dtype) {
  ts::LocalMode local(world);
  ts::Tensor received = ts::zeros(shape, ts::TensorOptions(dtype));
  std::vector<std::pair<int, int64_t>> to, from;
  for (int r : world.ranks()) {
    to.emplace_back(r, r == 0 ? 1 : -1);
    from.emplace_back(r, r == 1 ? 0 : -1);
  }
  const ts::Tensor sent = ts::ones({4});
  ts::dist::send(sent, ts::SymInt(ts::LocalInt(ts::RankMap<int64_t>(std::move(to)))));
  ts::dist::recv(received, ts::SymInt(ts::LocalInt(ts::RankMap<int64_t>(std::move(from)))));
  ts::dist::barrier(received);
  std::printf("FAIL: a mismatched recv was accepted\n");
  return 0;
}

}  // namespace

// A training loop's pattern: the same all_reduce again and again, with new values each time. The
// preparations counted are the world's (comm/prepared_call.hpp): each call runs one fibre, so a
// signature's first call prepares and every repeat replays, while a call whose shape, reduce op or
// averaging differs prepares anew. Every result must equal the simulated world's.
int persistent(const ts::World& world) {
  ts::comm::PreparedCounts before{}, after{};
  mpi_check::compare(tally, "persistent", world, [&] {
    ts::world::WorldState& here = ts::world::current();
    const bool spread = here.distributed();
    if (spread) before = ts::comm::prepared_counts(here);
    std::vector<ts::Tensor> results;
    for (int salt = 0; salt < 3; ++salt) {  // one signature, three calls: prepared once, replayed twice
      ts::Tensor t = inputs(5, 500 + salt);
      ts::dist::all_reduce(t);
      results.push_back(t);
    }
    ts::Tensor longer = inputs(7, 510);  // another shape: prepared anew
    ts::dist::all_reduce(longer);
    ts::Tensor largest = inputs(5, 511);  // another reduce op: prepared anew
    ts::dist::all_reduce(largest, ts::ReduceOp::MAX);
    ts::Tensor mean = inputs(5, 512);  // the sum's schedule, another call (averaged): prepared anew
    ts::dist::all_reduce(mean, ts::ReduceOp::AVG);
    ts::Tensor again = inputs(5, 513);  // the first signature once more: replayed
    ts::dist::all_reduce(again);
    results.insert(results.end(), {longer, largest, mean, again});
    if (spread) after = ts::comm::prepared_counts(here);
    return results;
  });
  const uint64_t prepared = after.prepared - before.prepared, replayed = after.replayed - before.replayed;
  if (prepared != 4 || replayed != 3)
    tally.fail("persistent: expected 4 call(s) prepared and 3 replayed, got " + std::to_string(prepared) +
               " prepared and " + std::to_string(replayed) + " replayed");
  return tally.report("world_check persistent", world.process_index());
}

// Two all_reduces of one signature (the second replays the first's preparation), then process 1
// calls another shape: the replay must still fail on the mismatch, never hang or compute.
int replay_mismatch(const ts::World& world) {
  ts::LocalMode local(world);
  for (int i = 0; i < 2; ++i) {
    ts::Tensor t = ts::ones({4});
    ts::dist::all_reduce(t);
  }
  ts::Tensor t = world.process_index() == 1 ? ts::ones({2, 2}) : ts::ones({4});
  ts::dist::all_reduce(t);
  std::printf("FAIL: a replayed all_reduce of [4] against [2, 2] ran\n");
  return 0;  // the driver expects a failure: reaching here is the bug
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "collectives";
  // Settings are read when the world is made: set here, they reach this process only.
  if (mode == "disagree" &&
      std::string(std::getenv("OMPI_COMM_WORLD_RANK") ? std::getenv("OMPI_COMM_WORLD_RANK") : "") == "1") {
    ::setenv("TESSERA_RANKS_PER_PROCESS", "2", 1);
    ::setenv("TESSERA_DEBUG", "1", 1);
  }
  try {
    const ts::World world = ts::init_world();
    if (world.num_processes() < 2) {
      std::printf("world_check needs several processes (mpirun -np 2 ...); got %d\n", world.num_processes());
      return 1;
    }
    if (mode == "hosted") return hosted(world);
    if (mode == "mismatch") {
      ts::LocalMode local(world);
      ts::Tensor t = ts::zeros({world.process_index() == 1 ? 5 : 4});
      ts::dist::all_reduce(t);
      std::printf("FAIL: mismatched all_reduce ran\n");
      return 0;  // the driver expects a failure: reaching here is the bug
    }
    if (mode == "op_mismatch") {
      ts::LocalMode local(world);
      ts::Tensor t = ts::ones({4});
      ts::dist::all_reduce(t, world.process_index() == 1 ? ts::ReduceOp::MAX : ts::ReduceOp::SUM);
      std::printf("FAIL: all_reduce with mismatched ops ran\n");
      return 0;
    }
    if (mode == "skip") {
      ts::LocalMode local(world);
      ts::Tensor t = ts::ones({4});
      if (world.process_index() != 1) ts::dist::all_reduce(t);  // process 1 skips it
      ts::dist::broadcast(t, 0);
      std::printf("FAIL: a skipped all_reduce went unnoticed\n");
      return 0;
    }
    if (mode == "unmatched_recv") {
      ts::LocalMode local(world);
      ts::Tensor t = ts::zeros({3});
      std::vector<std::pair<int, int64_t>> peers;  // rank 0 waits for rank 1, which never sends
      for (int r : world.ranks()) peers.emplace_back(r, r == 0 ? 1 : -1);
      ts::dist::recv(t, ts::SymInt(ts::LocalInt(ts::RankMap<int64_t>(std::move(peers)))));
      if (world.process_index() == 0) std::printf("FAIL: a recv with no matching send returned\n");
      return 0;
    }
    if (mode == "avg_mismatch") {
      ts::LocalMode local(world);
      ts::Tensor t = ts::ones({4});
      ts::dist::all_reduce(t, world.process_index() == 1 ? ts::ReduceOp::AVG : ts::ReduceOp::SUM);
      std::printf("FAIL: all_reduce with SUM against AVG ran\n");
      return 0;
    }
    if (mode == "shape_mismatch") {
      ts::LocalMode local(world);
      ts::Tensor t = world.process_index() == 1 ? ts::ones({2, 2}) : ts::ones({4});
      ts::dist::all_reduce(t);
      std::printf("FAIL: all_reduce of [4] against [2, 2] ran\n");
      return 0;
    }
    if (mode == "p2p_dtype") return mismatched_send(world, {4}, ts::kInt32);
    if (mode == "p2p_shape") return mismatched_send(world, {2, 2}, ts::kFloat32);
    if (mode == "disagree") {
      ts::LocalMode local(world);
      ts::Tensor t = ts::ones({4});
      ts::dist::all_reduce(t);
      std::printf("FAIL: processes with different settings computed a sum\n");
      return 0;
    }
    if (mode == "stop_peer" || mode == "kill_peer") {
      ts::LocalMode local(world);
      if (world.process_index() == 1) ::raise(mode == "stop_peer" ? SIGSTOP : SIGKILL);
      ts::Tensor t = ts::ones({4});
      ts::dist::all_reduce(t);
      // Process 1, resumed by the launcher before it is killed, may finish its part correctly.
      if (world.process_index() == 0)
        std::printf("FAIL: all_reduce with a stopped or killed peer returned\n");
      return 0;
    }
    if (mode == "sum") return checked_sum(world);
    if (mode == "costed") return costed(world);
    if (mode == "persistent") return persistent(world);
    if (mode == "replay_mismatch") return replay_mismatch(world);
    if (mode == "dead_peer") {
      ts::LocalMode local(world);
      if (world.process_index() == 1) return 0;  // leaves before the collective
      ts::Tensor t = ts::ones({4});
      ts::dist::all_reduce(t);
      std::printf("FAIL: all_reduce with a departed peer returned\n");
      return 0;
    }
    sweep(world);
    structured(world);
  } catch (const std::exception& e) {
    std::printf("process error: %s\n", e.what());
    std::fflush(stdout);
    return 1;
  }
  return tally.report("world_check", ts::init_world().process_index());
}
