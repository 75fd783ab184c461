// A tensor's bytes keep their identity once their address is handed out (data_ptr, to_dlpack):
// every in-place collective writes its result into them rather than swapping in other memory, the
// exported memory holds the result, a write through one rank's export reaches that rank's shard
// and no other, and a replica made of an exposed tensor gets bytes of its own. Expected values are
// computed here by hand from distinct per-rank inputs, never read back from the code under test.
#include <dlpack/dlpack.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "tensor/tensor_impl.hpp"
#include "test_util.hpp"

namespace ts = tessera;

namespace {

constexpr int64_t kLength = 16;  // elements of every per-rank block

using Values = std::vector<float>;

// A local tensor whose shard on rank r holds value(r, i) at element i (n elements): distinct per
// rank, so each shard has private bytes.
template <class Value>
ts::Tensor per_rank(int64_t n, Value value) {
  return ts::rank_map([&](int r) {
    Values v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = value(r, i);
    return ts::from_values(v, {n});
  });
}

// What an output shard holds before a collective writes it: negative, unlike every result.
ts::Tensor outputs_before(int64_t n) {
  return per_rank(
      n, [](int r, int64_t i) { return -1000.f * static_cast<float>(r + 1) - static_cast<float>(i); });
}

// One rank's shard handed out both ways before the collective.
struct Exported {
  const void* pointer = nullptr;
  DLManagedTensor* managed = nullptr;
};

// Every rank's shard of one local tensor, handed out; the exports are released with it.
class Exports {
 public:
  explicit Exports(const ts::Tensor& local) : local_(local) {
    for (int r : local.ranks()) {
      const ts::Tensor shard = local.shard(r);
      shards_.push_back({shard.data_ptr(), ts::to_dlpack(shard)});
    }
  }
  ~Exports() {
    for (const Exported& e : shards_) e.managed->deleter(e.managed);
  }
  Exports(const Exports&) = delete;
  Exports& operator=(const Exports&) = delete;

  // After the collective: each rank's pointer is the same, its exported memory holds
  // expected[rank], and a write through each rank's export shows in that rank's shard only.
  void check(const std::vector<Values>& expected, const std::string& what) const {
    CAPTURE(what);
    const std::vector<int> ranks = local_.ranks().ranks();
    for (size_t k = 0; k < ranks.size(); ++k) {
      const int r = ranks[k];
      CAPTURE(r);
      const DLTensor& dl = shards_[k].managed->dl_tensor;
      CHECK(local_.shard(r).data_ptr() == shards_[k].pointer);
      REQUIRE(dl.data == shards_[k].pointer);
      const auto* exported = static_cast<const float*>(dl.data);
      CHECK(Values(exported, exported + expected[k].size()) == expected[k]);
    }
    // Distinct marks, one per rank: a write reaching another rank's bytes shows as a wrong mark.
    for (size_t k = 0; k < ranks.size(); ++k)
      static_cast<float*>(shards_[k].managed->dl_tensor.data)[0] = 0.25f + static_cast<float>(k);
    for (size_t k = 0; k < ranks.size(); ++k) {
      CAPTURE(ranks[k]);
      Values marked = expected[k];
      marked[0] = 0.25f + static_cast<float>(k);
      CHECK(local_.shard(ranks[k]).to_vector<float>() == marked);
    }
  }

 private:
  ts::Tensor local_;
  std::vector<Exported> shards_;
};

std::vector<Values> same_for_every_rank(int world, const Values& v) {
  return std::vector<Values>(static_cast<size_t>(world), v);
}

const int kWorlds[] = {1, 3, 7};

}  // namespace

TEST_CASE("all_reduce, broadcast and reduce write into the bytes a data_ptr and a DLPack export name") {
  for (const int world : kWorlds) {
    CAPTURE(world);
    ts::LocalMode mode(world);
    const auto input = [](int r, int64_t i) {
      return 10.f * static_cast<float>(r) + static_cast<float>(i) + 1;
    };
    // Rank r holds 10r + i + 1: the sum over ranks is 10 * (0 + ... + world-1) + world * (i + 1).
    Values sum(kLength);
    for (int64_t i = 0; i < kLength; ++i)
      sum[static_cast<size_t>(i)] = 10.f * static_cast<float>(world * (world - 1)) / 2 +
                                    static_cast<float>(world) * static_cast<float>(i + 1);
    {
      ts::Tensor t = per_rank(kLength, input);
      const Exports exports(t);
      ts::dist::all_reduce(t, ts::ReduceOp::SUM);
      exports.check(same_for_every_rank(world, sum), "all_reduce");
    }
    {
      ts::Tensor t = per_rank(kLength, input);
      const Exports exports(t);
      const int src = world - 1;
      ts::dist::broadcast(t, src);
      Values from_src(kLength);
      for (int64_t i = 0; i < kLength; ++i) from_src[static_cast<size_t>(i)] = input(src, i);
      exports.check(same_for_every_rank(world, from_src), "broadcast");
    }
    {
      ts::Tensor t = per_rank(kLength, input);
      const Exports exports(t);
      const int dst = world / 2;
      ts::dist::reduce(t, dst, ts::ReduceOp::SUM);
      // Only the root's shard receives the sum; the others keep their inputs.
      std::vector<Values> expected;
      for (int r = 0; r < world; ++r) {
        Values own(kLength);
        for (int64_t i = 0; i < kLength; ++i) own[static_cast<size_t>(i)] = input(r, i);
        expected.push_back(r == dst ? sum : own);
      }
      exports.check(expected, "reduce");
    }
  }
}

TEST_CASE("gathers, scatters and all_to_all write into exported output shards") {
  for (const int world : kWorlds) {
    CAPTURE(world);
    ts::LocalMode mode(world);
    const auto w = static_cast<size_t>(world);
    // Rank q's j-th input block holds 100q + 10j + i + 1 at element i.
    const auto block = [](int q, int j, int64_t i) {
      return 100.f * static_cast<float>(q) + 10.f * static_cast<float>(j) + static_cast<float>(i) + 1;
    };
    std::vector<ts::Tensor> input_list;
    for (int j = 0; j < world; ++j)
      input_list.push_back(per_rank(kLength, [&](int q, int64_t i) { return block(q, j, i); }));
    const ts::Tensor own = input_list[0];  // rank q's own block: block(q, 0, i)

    {  // all_gather: output j on every rank is rank j's block.
      std::vector<ts::Tensor> outputs;
      for (size_t j = 0; j < w; ++j) outputs.push_back(outputs_before(kLength));
      std::vector<std::unique_ptr<Exports>> exports;
      for (const ts::Tensor& o : outputs) exports.push_back(std::make_unique<Exports>(o));
      ts::dist::all_gather(outputs, own);
      for (int j = 0; j < world; ++j) {
        Values expected(kLength);
        for (int64_t i = 0; i < kLength; ++i) expected[static_cast<size_t>(i)] = block(j, 0, i);
        exports[static_cast<size_t>(j)]->check(same_for_every_rank(world, expected),
                                               "all_gather output " + std::to_string(j));
      }
    }
    {  // all_gather_into_tensor: every rank holds the blocks of ranks 0..world-1 in order.
      ts::Tensor output = outputs_before(kLength * world);
      const Exports exports(output);
      ts::dist::all_gather_into_tensor(output, own);
      Values expected;
      for (int q = 0; q < world; ++q)
        for (int64_t i = 0; i < kLength; ++i) expected.push_back(block(q, 0, i));
      exports.check(same_for_every_rank(world, expected), "all_gather_into_tensor");
    }
    {  // reduce_scatter: rank r receives the sum over ranks q of their r-th block.
      ts::Tensor output = outputs_before(kLength);
      const Exports exports(output);
      ts::dist::reduce_scatter(output, input_list, ts::ReduceOp::SUM);
      std::vector<Values> expected(w, Values(kLength, 0.f));
      for (int r = 0; r < world; ++r)
        for (int q = 0; q < world; ++q)
          for (int64_t i = 0; i < kLength; ++i)
            expected[static_cast<size_t>(r)][static_cast<size_t>(i)] += block(q, r, i);
      exports.check(expected, "reduce_scatter");
    }
    {  // reduce_scatter_tensor: rank q's input is 100q + k + 1 over world blocks; rank r gets block r summed.
      const ts::Tensor input = per_rank(kLength * world, [](int q, int64_t k) {
        return 100.f * static_cast<float>(q) + static_cast<float>(k) + 1;
      });
      ts::Tensor output = outputs_before(kLength);
      const Exports exports(output);
      ts::dist::reduce_scatter_tensor(output, input, ts::ReduceOp::SUM);
      std::vector<Values> expected(w, Values(kLength, 0.f));
      for (int r = 0; r < world; ++r)
        for (int q = 0; q < world; ++q)
          for (int64_t i = 0; i < kLength; ++i)
            expected[static_cast<size_t>(r)][static_cast<size_t>(i)] +=
                100.f * static_cast<float>(q) + static_cast<float>(r * kLength + i) + 1;
      exports.check(expected, "reduce_scatter_tensor");
    }
    {  // all_to_all: output j on rank r is rank j's r-th block.
      std::vector<ts::Tensor> outputs;
      for (size_t j = 0; j < w; ++j) outputs.push_back(outputs_before(kLength));
      std::vector<std::unique_ptr<Exports>> exports;
      for (const ts::Tensor& o : outputs) exports.push_back(std::make_unique<Exports>(o));
      ts::dist::all_to_all(outputs, input_list);
      for (int j = 0; j < world; ++j) {
        std::vector<Values> expected(w, Values(kLength));
        for (int r = 0; r < world; ++r)
          for (int64_t i = 0; i < kLength; ++i)
            expected[static_cast<size_t>(r)][static_cast<size_t>(i)] = block(j, r, i);
        exports[static_cast<size_t>(j)]->check(expected, "all_to_all output " + std::to_string(j));
      }
    }
    {  // scatter: rank r receives the root's r-th block.
      const int src = world - 1;
      ts::Tensor output = outputs_before(kLength);
      const Exports exports(output);
      ts::dist::scatter(output, input_list, src);
      std::vector<Values> expected(w, Values(kLength));
      for (int r = 0; r < world; ++r)
        for (int64_t i = 0; i < kLength; ++i)
          expected[static_cast<size_t>(r)][static_cast<size_t>(i)] = block(src, r, i);
      exports.check(expected, "scatter");
    }
    {  // gather: output j on the root is rank j's block; the other ranks' outputs keep their values.
      const int dst = world / 2;
      std::vector<ts::Tensor> outputs;
      for (size_t j = 0; j < w; ++j) outputs.push_back(outputs_before(kLength));
      std::vector<std::unique_ptr<Exports>> exports;
      for (const ts::Tensor& o : outputs) exports.push_back(std::make_unique<Exports>(o));
      ts::dist::gather(outputs, own, dst);
      for (int j = 0; j < world; ++j) {
        std::vector<Values> expected(w, Values(kLength));
        for (int r = 0; r < world; ++r)
          for (int64_t i = 0; i < kLength; ++i)
            expected[static_cast<size_t>(r)][static_cast<size_t>(i)] =
                r == dst ? block(j, 0, i) : -1000.f * static_cast<float>(r + 1) - static_cast<float>(i);
        exports[static_cast<size_t>(j)]->check(expected, "gather output " + std::to_string(j));
      }
    }
  }
}

TEST_CASE("an exported shard of a replicated tensor receives an all_reduce's result in its own bytes") {
  for (const int world : kWorlds) {
    CAPTURE(world);
    ts::LocalMode mode(world);
    ts::Tensor t = ts::full({kLength}, 1.5f);  // one buffer shared by every rank
    const int exposed = world - 1;
    DLManagedTensor* managed = ts::to_dlpack(t.shard(exposed));
    auto* exported = static_cast<float*>(managed->dl_tensor.data);
    ts::dist::all_reduce(t, ts::ReduceOp::SUM);
    const Values sum(kLength, 1.5f * static_cast<float>(world));
    CHECK(t.shard(exposed).data_ptr() == exported);
    CHECK(Values(exported, exported + kLength) == sum);
    exported[3] = -7.f;
    Values marked = sum;
    marked[3] = -7.f;
    for (int r = 0; r < world; ++r) {
      CAPTURE(r);
      CHECK(t.shard(r).to_vector<float>() == (r == exposed ? marked : sum));
    }
    managed->deleter(managed);
  }
}

TEST_CASE("data_ptr of a shard that shares its buffer names bytes of its own, which in-place writes keep") {
  for (const int world : kWorlds) {
    CAPTURE(world);
    ts::LocalMode mode(world);
    ts::Tensor t = ts::full({kLength}, 2.5f);  // one buffer shared by every rank
    const int exposed = world / 2;
    const auto* pointer = static_cast<const float*>(t.shard(exposed).data_ptr());
    for (int r = 0; r < world; ++r)
      if (r != exposed) CHECK(t.shard(r).current_address() != static_cast<const void*>(pointer));
    ts::Tensor shard = t.shard(exposed);
    shard.fill_(3.5f);  // written through the handle: the pointer names the new values
    ts::dist::all_reduce(t, ts::ReduceOp::SUM);
    const float sum = 2.5f * static_cast<float>(world - 1) + 3.5f;
    CHECK(t.shard(exposed).data_ptr() == pointer);
    CHECK(Values(pointer, pointer + kLength) == Values(kLength, sum));
    for (int r = 0; r < world; ++r) {
      CAPTURE(r);
      CHECK(t.shard(r).to_vector<float>() == Values(kLength, sum));
    }
  }
}

TEST_CASE("an in-place collective writes into imported memory, which its producer then reads") {
  for (const int world : kWorlds) {
    CAPTURE(world);
    ts::LocalMode mode(world);
    // Rank r's shard is the producer's array r, holding r + i.
    std::vector<Values> arrays(static_cast<size_t>(world), Values(kLength));
    std::vector<int64_t> shape = {kLength};
    std::vector<DLManagedTensor> managed(static_cast<size_t>(world));
    for (int r = 0; r < world; ++r) {
      Values& a = arrays[static_cast<size_t>(r)];
      for (int64_t i = 0; i < kLength; ++i) a[static_cast<size_t>(i)] = static_cast<float>(r + i);
      DLManagedTensor& m = managed[static_cast<size_t>(r)];
      m.dl_tensor = {a.data(), {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape.data(), nullptr, 0};
      m.deleter = nullptr;  // the arrays outlive the tensors
    }
    {
      ts::Tensor t = ts::rank_map([&](int r) { return ts::from_dlpack(&managed[static_cast<size_t>(r)]); });
      ts::dist::all_reduce(t, ts::ReduceOp::SUM);
    }
    // Sum over ranks of r + i: world * (world - 1) / 2 + world * i.
    Values sum(kLength);
    for (int64_t i = 0; i < kLength; ++i)
      sum[static_cast<size_t>(i)] =
          static_cast<float>(world * (world - 1)) / 2 + static_cast<float>(world * i);
    for (int r = 0; r < world; ++r) {
      CAPTURE(r);
      CHECK(arrays[static_cast<size_t>(r)] == sum);
    }
  }
}

TEST_CASE("a replica of an exposed tensor has bytes of its own: writes through the export stay out") {
  const Values source = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
  ts::Tensor plain = ts::from_values(source, {6});
  DLManagedTensor* managed = ts::to_dlpack(plain);
  auto* exported = static_cast<float*>(managed->dl_tensor.data);
  {
    ts::LocalMode mode(3);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
    const ts::DTensor distributed = ts::distribute_tensor(plain, mesh, {ts::Replicate()});
    const ts::DTensor wrapped = ts::from_local(plain, mesh, {ts::Replicate()});
    ts::Tensor direct(plain.impl()->replica());
    exported[0] = 100.f;  // the consumer writes after the replicas were made
    Values written = source;
    written[0] = 100.f;
    CHECK(plain.to_vector<float>() == written);
    CHECK(plain.data_ptr() == exported);
    for (int r = 0; r < 3; ++r) {
      CAPTURE(r);
      CHECK(distributed.to_local().shard(r).to_vector<float>() == source);
      CHECK(wrapped.to_local().shard(r).to_vector<float>() == source);
      CHECK(wrapped.to_local().shard(r).data_ptr() != exported);
    }
    CHECK(direct.to_vector<float>() == source);
  }
  managed->deleter(managed);
}

TEST_CASE("an export of a tensor others share gives it private bytes that keep their address") {
  const Values source = {1.f, 2.f, 3.f, 4.f};
  ts::Tensor plain = ts::from_values(source, {4});
  ts::Tensor replica(plain.impl()->replica());  // made before the export: shares the bytes
  DLManagedTensor* managed = ts::to_dlpack(plain);
  auto* exported = static_cast<float*>(managed->dl_tensor.data);
  exported[1] = -2.f;
  CHECK(plain.to_vector<float>() == Values{1.f, -2.f, 3.f, 4.f});
  CHECK(replica.to_vector<float>() == source);
  // Writes through the tensor land in the exported bytes, which never move again.
  plain.fill_(8.f);
  CHECK(plain.data_ptr() == exported);
  CHECK(Values(exported, exported + 4) == Values(4, 8.f));
  CHECK(replica.to_vector<float>() == source);
  managed->deleter(managed);
}
