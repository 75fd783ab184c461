// MemoryCounter, MemoryCategory and tag_memory: bytes per rank and category, counted by hand.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>
#include <thread>

namespace ts = tessera;

namespace {

constexpr int64_t kF32 = 4;  // bytes of a float32

}  // namespace

TEST_CASE("memory: a [3,4] float32 local tensor over 4 ranks holds 48 bytes on each rank") {
  ts::LocalMode mode(4);
  ts::MemoryCounter counter;
  {
    ts::Tensor t = ts::zeros({3, 4});
    REQUIRE(t.is_local());
    for (int r = 0; r < 4; ++r) {
      CHECK(counter.current_bytes("", r) == 3 * 4 * kF32);
      CHECK(counter.peak_bytes("", r) == 48);
    }
    CHECK(counter.current_bytes() == 48);
    CHECK(counter.current_bytes("activations") == 48);
    CHECK(counter.current_bytes("parameters") == 0);
    CHECK(counter.current_bytes("", 4) == 0);  // no such rank held anything
    CHECK(counter.ranks() == std::vector<int>{0, 1, 2, 3});
  }
  // The last handle went: every rank's bytes left; the peaks stay.
  CHECK(counter.current_bytes() == 0);
  for (int r = 0; r < 4; ++r) CHECK(counter.peak_bytes("", r) == 48);
}

TEST_CASE("memory: shared replicas count for every rank holding one") {
  ts::LocalMode mode(3);
  ts::MemoryCounter counter;
  ts::Tensor t = ts::ones({2, 5});  // one value on every rank
  // The three shards share one buffer, yet each rank of a cluster would hold its own copy.
  CHECK(t.shard(0).current_address() == t.shard(1).current_address());
  CHECK(t.shard(0).current_address() == t.shard(2).current_address());
  for (int r = 0; r < 3; ++r) CHECK(counter.current_bytes("", r) == 40);
  // A write makes rank 1's bytes private: still 40 per rank, as before.
  ts::Tensor u = t * 2;
  for (int r = 0; r < 3; ++r) CHECK(counter.current_bytes("", r) == 80);
}

TEST_CASE("memory: uneven shards give ranks different bytes and the largest is reported") {
  ts::LocalMode mode(3);
  ts::MemoryCounter counter;
  // Made in each rank's own task: rank r holds (r + 1) * 2 float64 elements.
  ts::Tensor t = ts::rank_map([](int r) {
    return ts::zeros({r + 1, 2}, ts::TensorOptions().dtype(ts::kFloat64));
  });
  CHECK(counter.current_bytes("", 0) == 16);
  CHECK(counter.current_bytes("", 1) == 32);
  CHECK(counter.current_bytes("", 2) == 48);
  CHECK(counter.current_bytes() == 48);
  CHECK(counter.peak_bytes() == 48);
  const std::vector<ts::MemoryCounter::Entry> entries = counter.entries();
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].category == "activations");
  CHECK(entries[0].peak_bytes == 48);
  CHECK(entries[0].current_bytes == 48);
}

TEST_CASE("memory: plain tensors made outside every mode are rank 0's until a local tensor holds them") {
  ts::MemoryCounter counter;
  ts::Tensor a = ts::zeros({5});  // 20 bytes, the program's: rank 0
  ts::Tensor b = ts::zeros({6});  // 24 bytes: rank 0 holds 44 now
  CHECK(counter.current_bytes("", 0) == 44);
  ts::Tensor lt = ts::local_tensor({{0, a}, {1, b}});
  // b is rank 1's shard now: its bytes moved there.
  CHECK(counter.current_bytes("", 0) == 20);
  CHECK(counter.current_bytes("", 1) == 24);
  CHECK(counter.peak_bytes("", 0) == 44);  // both were rank 0's for a while
  CHECK(counter.peak_bytes("", 1) == 24);
  // One storage held as the shard of two ranks counts for both.
  ts::Tensor c = ts::zeros({4});  // 16 bytes
  ts::Tensor twice = ts::local_tensor({{2, c}, {3, c}});
  CHECK(counter.current_bytes("", 2) == 16);
  CHECK(counter.current_bytes("", 3) == 16);
  CHECK(counter.current_bytes("", 0) == 20);
}

TEST_CASE("memory: views share their storage's bytes and count once") {
  ts::MemoryCounter counter;
  ts::Tensor narrowed;
  {
    ts::Tensor t = ts::zeros({4, 4});  // 64 bytes
    ts::Tensor v = t.transpose(0, 1);
    ts::Tensor row = t[1];
    narrowed = t.narrow(0, 1, 2);
    CHECK(counter.current_bytes() == 64);
  }
  // A view keeps the whole storage alive, with all of its bytes.
  CHECK(counter.current_bytes() == 64);
  narrowed = ts::Tensor();
  CHECK(counter.current_bytes() == 0);
  CHECK(counter.peak_bytes() == 64);
}

TEST_CASE("memory: frees, peak against current, and reset_peak") {
  ts::MemoryCounter counter;
  ts::Tensor a = ts::zeros({10});  // 40
  ts::Tensor b = ts::zeros({20});  // 80
  CHECK(counter.current_bytes() == 120);
  CHECK(counter.peak_bytes() == 120);
  a = ts::Tensor();
  CHECK(counter.current_bytes() == 80);
  CHECK(counter.peak_bytes() == 120);
  ts::Tensor c = ts::zeros({5});  // 20
  CHECK(counter.current_bytes() == 100);
  CHECK(counter.peak_bytes() == 120);
  counter.reset_peak();
  CHECK(counter.peak_bytes() == 100);
  CHECK(counter.peak_bytes("activations") == 100);
  c = ts::Tensor();
  CHECK(counter.peak_bytes() == 100);
  CHECK(counter.current_bytes() == 80);
  ts::Tensor d = ts::zeros({8});  // 32: 112 now
  CHECK(counter.peak_bytes() == 112);
}

TEST_CASE("memory: the peak of the total is not the sum of the categories' peaks") {
  ts::MemoryCounter counter;
  {
    ts::MemoryCategory scope("optimizer_state");
    ts::Tensor state = ts::zeros({25});  // 100 bytes, gone at the end of the scope
  }
  ts::Tensor act = ts::zeros({10});  // 40 bytes
  CHECK(counter.peak_bytes("optimizer_state") == 100);
  CHECK(counter.peak_bytes("activations") == 40);
  CHECK(counter.peak_bytes() == 100);  // never 140 at once
  CHECK(counter.current_bytes() == 40);
}

TEST_CASE("memory: nested counters each see what was allocated while they were alive") {
  ts::MemoryCounter outer;
  ts::Tensor x = ts::zeros({10});  // 40
  {
    ts::MemoryCounter inner;
    ts::Tensor y = ts::zeros({20});  // 80
    CHECK(outer.current_bytes() == 120);
    CHECK(inner.current_bytes() == 80);
    x = ts::Tensor();  // made before the inner counter: only the outer sees it go
    CHECK(outer.current_bytes() == 80);
    CHECK(inner.current_bytes() == 80);
    CHECK(inner.peak_bytes() == 80);
  }
  CHECK(outer.current_bytes() == 0);
  CHECK(outer.peak_bytes() == 120);
  ts::Tensor z = ts::zeros({3});
  CHECK(outer.current_bytes() == 12);
}

TEST_CASE("memory: nothing made before any counter, or after it ends, is counted") {
  ts::Tensor before = ts::zeros({100});
  ts::MemoryCounter counter;
  CHECK(counter.current_bytes() == 0);
  before = ts::Tensor();  // its going is no change either
  CHECK(counter.current_bytes() == 0);
  CHECK(counter.peak_bytes() == 0);
  CHECK(counter.entries().empty());
}

TEST_CASE("memory: MemoryCategory scopes set the category and nest") {
  ts::LocalMode mode(2);
  ts::MemoryCounter counter;
  ts::Tensor p, s, g, a;
  {
    ts::MemoryCategory params("parameters");
    p = ts::zeros({4});  // 16 per rank
    {
      ts::MemoryCategory state("optimizer_state");
      s = ts::zeros({2, 4});  // 32 per rank
    }
    g = ts::zeros({1});  // parameters again: 4 per rank
  }
  a = ts::zeros({3});  // activations: 12 per rank
  CHECK(counter.current_bytes("parameters", 0) == 20);
  CHECK(counter.current_bytes("parameters", 1) == 20);
  CHECK(counter.current_bytes("optimizer_state") == 32);
  CHECK(counter.current_bytes("activations") == 12);
  CHECK(counter.current_bytes() == 64);
  const std::vector<ts::MemoryCounter::Entry> entries = counter.entries();
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].category == "parameters");
  CHECK(entries[1].category == "optimizer_state");
  CHECK(entries[2].category == "activations");
  CHECK_THROWS_WITH_AS(ts::MemoryCategory(""), doctest::Contains("the category is empty"), ts::Error);
}

TEST_CASE("memory: a user's own label is a category of its own, listed after the known ones") {
  ts::MemoryCounter counter;
  ts::MemoryCategory scope("kv_cache");
  ts::Tensor cache = ts::zeros({2, 8});  // 64
  ts::Tensor b;
  {
    ts::MemoryCategory grads("gradients");
    b = ts::zeros({1});
  }
  const std::vector<ts::MemoryCounter::Entry> entries = counter.entries();
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].category == "gradients");
  CHECK(entries[1].category == "kv_cache");
  CHECK(entries[1].current_bytes == 64);
}

TEST_CASE("memory: tag_memory moves a tensor's bytes, with its views, to another category") {
  ts::LocalMode mode(2);
  ts::MemoryCounter counter;
  ts::Tensor w = ts::zeros({3, 4});  // 48 per rank
  ts::Tensor view = w.t();
  ts::tag_memory(view, "parameters");  // a view's storage is its base's
  CHECK(counter.current_bytes("parameters", 0) == 48);
  CHECK(counter.current_bytes("parameters", 1) == 48);
  CHECK(counter.current_bytes("activations") == 0);
  CHECK(counter.peak_bytes("activations") == 48);  // where they were first
  CHECK(counter.current_bytes() == 48);            // moved, not added
  CHECK(counter.peak_bytes() == 48);
  ts::tag_memory(w, "parameters");  // tagging again changes nothing
  CHECK(counter.current_bytes("parameters") == 48);
  w = ts::Tensor();
  view = ts::Tensor();
  CHECK(counter.current_bytes("parameters") == 0);
  CHECK_THROWS_WITH_AS(ts::tag_memory(ts::zeros({1}), ""), doctest::Contains("the category is empty"),
                       ts::Error);
  ts::tag_memory(ts::Tensor(), "parameters");  // no bytes: nothing happens
}

TEST_CASE("memory: tag_memory brings bytes made before the counter in") {
  ts::LocalMode mode(2);
  ts::Tensor weight = ts::rank_map([](int r) { return ts::zeros({r + 2}); });  // 8 and 12 bytes
  ts::MemoryCounter counter;
  CHECK(counter.current_bytes() == 0);
  ts::tag_memory(weight, "parameters");
  CHECK(counter.current_bytes("parameters", 0) == 8);
  CHECK(counter.current_bytes("parameters", 1) == 12);
  weight = ts::Tensor();
  CHECK(counter.current_bytes() == 0);
  CHECK(counter.peak_bytes("parameters") == 12);
}

TEST_CASE("memory: gradients a backward stores are counted as gradients") {
  ts::LocalMode mode(2);
  ts::Tensor w = ts::ones({3, 2});
  w.set_requires_grad(true);
  ts::MemoryCounter counter;
  ts::Tensor loss = (w * 3).sum();
  loss.backward();
  REQUIRE(w.grad().defined());
  CHECK(counter.current_bytes("gradients", 0) == 24);
  CHECK(counter.current_bytes("gradients", 1) == 24);
  CHECK(w.grad().shard(1).to_vector<float>() == std::vector<float>(6, 3.0f));
  w.zero_grad();  // set to none: the gradient's bytes go
  CHECK(counter.current_bytes("gradients") == 0);
  CHECK(counter.peak_bytes("gradients") == 24);
}

TEST_CASE("memory: per-rank tasks on the pool's threads keep the issuing thread's category") {
  ts::LocalMode mode(2);
  const int64_t n = 1 << 16;  // past the size above which ranks run on pool threads
  ts::Tensor x = ts::ones({n});
  ts::MemoryCounter counter;
  ts::Tensor y;
  {
    ts::MemoryCategory scope("optimizer_state");
    y = x * 2;
  }
  CHECK(counter.current_bytes("optimizer_state", 0) == n * kF32);
  CHECK(counter.current_bytes("optimizer_state", 1) == n * kF32);
  CHECK(counter.current_bytes("activations") == 0);
}

TEST_CASE("memory: a thread's independent world is counted by its own counters only") {
  ts::LocalMode mode(2);
  ts::MemoryCounter counter;
  ts::Tensor mine = ts::zeros({4});  // 16 per rank
  int64_t theirs_seen = -1;
  std::thread other([&] {
    ts::LocalMode their_mode(3);
    ts::MemoryCounter their_counter;
    ts::Tensor theirs = ts::zeros({100});  // 400 per rank, in their world only
    theirs_seen = their_counter.current_bytes("", 2);
  });
  other.join();
  CHECK(theirs_seen == 400);
  CHECK(counter.current_bytes() == 16);
  CHECK(counter.peak_bytes() == 16);
  CHECK(counter.ranks() == std::vector<int>{0, 1});
}

TEST_CASE("memory: a counter made outside a mode sees the modes its thread opens") {
  ts::MemoryCounter counter;
  {
    ts::LocalMode mode(2);
    ts::Tensor t = ts::zeros({2});
    CHECK(counter.current_bytes("", 1) == 8);
  }
  CHECK(counter.current_bytes() == 0);
  CHECK(counter.peak_bytes("", 1) == 8);
}

TEST_CASE("memory: the table and bad ranks") {
  ts::MemoryCounter counter;
  ts::Tensor a = ts::zeros({10});
  ts::MemoryCategory scope("parameters");
  ts::Tensor p = ts::zeros({2});
  const std::string table = counter.table();
  CHECK(table ==
        "category     peak bytes/rank  current bytes/rank\n"
        "parameters                 8                   8\n"
        "activations               40                  40\n"
        "total                     48                  48\n");
  CHECK_THROWS_WITH_AS(counter.peak_bytes("", -2), doctest::Contains("rank -2 is not a rank"), ts::Error);
  CHECK_THROWS_WITH_AS(counter.current_bytes("activations", -5), doctest::Contains("rank -5"), ts::Error);
}
