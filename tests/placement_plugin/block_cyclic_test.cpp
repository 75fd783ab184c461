// A third-party placement with an argument: the out-of-tree block-cyclic example, "C(dim, block)".
// Expected layouts come from the definition (row j belongs to shard (j / block) mod p, a shard
// keeps its rows in ascending order), computed here, not by the plugin.
#include <doctest/doctest.h>

#include <string>
#include <tessera/tessera.hpp>
#include <vector>

namespace ts = tessera;

namespace {

void load_block_cyclic() {
  for (const ts::PluginInfo& info : ts::loaded_plugins())
    if (info.name == "placement-block-cyclic") return;
  ts::load_plugin(TESSERA_BLOCK_CYCLIC_PLUGIN_FILE);
}

// The rows shard `index` of `shards` holds of `n` rows in blocks of `block`, by the definition.
std::vector<int64_t> expected_rows(int64_t n, int64_t block, int64_t shards, int64_t index) {
  std::vector<int64_t> rows;
  for (int64_t j = 0; j < n; ++j)
    if ((j / block) % shards == index) rows.push_back(j);
  return rows;
}

std::string error_of(const std::string& text) {
  try {
    (void)ts::Placement::parse(text);
  } catch (const ts::Error& e) {
    return e.what();
  }
  return "no error";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("block-cyclic shards hold the rows the definition gives, for many sizes, blocks and worlds") {
  load_block_cyclic();
  for (int world : {1, 3, 7})
    for (int64_t n : {0, 1, 10, 23})
      for (int64_t block : {1, 2, 5, 100}) {
        CAPTURE(world);
        CAPTURE(n);
        CAPTURE(block);
        ts::LocalMode mode(world);
        ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {world});
        // Row j holds 100 + j in both columns: distinct values, so any misplaced row shows.
        const ts::Tensor x =
            (ts::arange(n, ts::DType::Int64) + 100).reshape({n, 1}).expand({n, 2}).contiguous();
        const ts::Placement c = ts::Placement::parse("C(0, " + std::to_string(block) + ")");
        ts::DTensor d = ts::distribute_tensor(x, mesh, {c});
        for (int r = 0; r < world; ++r) {
          const std::vector<int64_t> rows = expected_rows(n, block, world, r);
          const ts::Tensor shard = d.to_local().shard(r);
          REQUIRE(shard.size(0) == static_cast<int64_t>(rows.size()));
          const std::vector<int64_t> values = shard.to_vector<int64_t>();
          for (size_t i = 0; i < rows.size(); ++i) {
            CHECK(values[2 * i] == 100 + rows[i]);
            CHECK(values[2 * i + 1] == 100 + rows[i]);
          }
        }
        CHECK(ts::equal(d.full_tensor(), x));
      }
}

TEST_CASE("block-cyclic redistributes to and from other placements and other block sizes") {
  load_block_cyclic();
  ts::LocalMode mode(3);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  const ts::Tensor x = ts::arange(22, ts::DType::Float32).reshape({11, 2}) * 1.5f;
  const ts::DTensor c2 = ts::distribute_tensor(x, mesh, {ts::Placement::parse("C(0,2)")});
  const ts::DTensor as_shard = c2.redistribute({ts::Shard(0)});
  const ts::DTensor direct_shard = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  const ts::DTensor c3 = c2.redistribute({ts::Placement::shard(0, "block_cyclic", "3")});
  for (int r = 0; r < 3; ++r) {
    CHECK(ts::equal(as_shard.to_local().shard(r), direct_shard.to_local().shard(r)));
    const std::vector<int64_t> rows = expected_rows(11, 3, 3, r);
    const ts::Tensor shard = c3.to_local().shard(r);
    REQUIRE(shard.size(0) == static_cast<int64_t>(rows.size()));
    for (size_t i = 0; i < rows.size(); ++i) CHECK(ts::equal(shard[static_cast<int64_t>(i)], x[rows[i]]));
  }
  CHECK(ts::equal(c3.redistribute({ts::Replicate()}).to_local().shard(2), x));
  CHECK(ts::equal(direct_shard.redistribute({ts::Placement::parse("C(0, 2)")}).full_tensor(), x));
}

TEST_CASE("block-cyclic on one mesh dim nests with Shard on the other") {
  load_block_cyclic();
  ts::LocalMode mode(4);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2});
  const ts::Tensor x = ts::arange(12, ts::DType::Int64).reshape({12, 1});
  // Mesh dim 0 takes blocks of 2 cyclically: rows {0,1,4,5,8,9} and {2,3,6,7,10,11}; mesh dim 1
  // then cuts each of those six-row pieces in torch.chunk halves.
  const ts::DTensor d = ts::distribute_tensor(x, mesh, ts::parse_placements("C(0,2),S(0)"));
  const std::vector<std::vector<int64_t>> expected = {{0, 1, 4}, {5, 8, 9}, {2, 3, 6}, {7, 10, 11}};
  for (int r = 0; r < 4; ++r)
    CHECK(d.to_local().shard(r).to_vector<int64_t>() == expected[static_cast<size_t>(r)]);
  CHECK(ts::equal(d.full_tensor(), x));
}

TEST_CASE("block-cyclic placements print and parse back, and the block size is part of equality") {
  load_block_cyclic();
  const ts::Placement c = ts::Placement::parse("C(1, 4)");
  CHECK(c.is_shard(1));
  CHECK(c.strategy() == "block_cyclic");
  CHECK(c.arguments() == "4");
  CHECK(c.to_string() == "C(1,4)");
  CHECK(c.repr() == "BlockCyclic(dim=1, 4)");
  CHECK(ts::Placement::parse(c.repr()) == c);
  CHECK(ts::Placement::parse(c.to_string()) == c);
  CHECK(ts::Placement::shard(1, "block_cyclic", "4") == c);
  CHECK_FALSE(ts::Placement::parse("C(1,2)") == c);
  CHECK_FALSE(ts::Placement::parse("C(0,4)") == c);
  CHECK(ts::placements_text(ts::parse_placements("C(0,2),R")) == "C(0,2),R");
}

TEST_CASE("a bad block size is refused with the plugin's message, naming the placement") {
  load_block_cyclic();
  const std::string missing = error_of("C(0)");
  CHECK(contains(missing, "placement 'C(0)'"));
  CHECK(contains(missing, "block size must be an integer >= 1, got nothing"));
  CHECK(contains(error_of("C(0, x)"), "block size must be an integer >= 1, got 'x'"));
  CHECK(contains(error_of("C(0, 0)"), "got '0'"));
  CHECK(contains(error_of("BlockCyclic(dim=0, 2.5)"), "got '2.5'"));
  CHECK(contains(error_of("C(0, 99999999999999999999)"), "got '99999999999999999999'"));
  CHECK_THROWS_WITH_AS(ts::Placement::shard(0, "block_cyclic", "-1"), doctest::Contains("got '-1'"),
                       ts::Error);
}

TEST_CASE("strategies without arguments refuse them, and an unknown strategy is named") {
  load_block_cyclic();
  const std::string shard = error_of("S(0, 4)");
  CHECK(contains(shard, "strategy 'shard' takes no arguments after the tensor dim, got '4'"));
  CHECK(contains(error_of("B(1,2)"), "strategy 'balanced_shard' takes no arguments"));
  CHECK_THROWS_WITH_AS(ts::Placement::shard(0, "shard", "4"), doctest::Contains("takes no arguments"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::Placement::shard(0, "no_such_strategy"),
                       doctest::Contains("placement strategy 'no_such_strategy' is not loaded"), ts::Error);
  // The known forms in an unknown prefix's message show that C takes arguments.
  CHECK(contains(error_of("Q(0)"), "C(0,<arguments>)"));
}

TEST_CASE("DTensor ops on block-cyclic operands give the single-process results") {
  load_block_cyclic();
  ts::LocalMode mode(3);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  const ts::Tensor a = ts::arange(14, ts::DType::Float64).reshape({7, 2}) + 0.25;
  const ts::Tensor b = ts::arange(14, ts::DType::Float64).reshape({7, 2}) * -2.0;
  const ts::Tensor w = ts::arange(6, ts::DType::Float64).reshape({2, 3}) - 1.0;
  const ts::DTensor ca = ts::distribute_tensor(a, mesh, {ts::Placement::parse("C(0,2)")});
  const ts::DTensor cb3 = ts::distribute_tensor(b, mesh, {ts::Placement::parse("C(0,3)")});
  const ts::DTensor sb = ts::distribute_tensor(b, mesh, {ts::Shard(0)});
  const ts::DTensor rw = ts::distribute_tensor(w, mesh, {ts::Replicate()});
  // Different layouts of the same dim must be brought together, not added shard by shard.
  CHECK(ts::equal((ca + cb3).full_tensor(), a + b));
  CHECK(ts::equal((ca + sb).full_tensor(), a + b));
  CHECK(ts::equal(ts::matmul(ca, rw).full_tensor(), ts::matmul(a, w)));
  CHECK(ts::equal(ca.sum().full_tensor(), a.sum()));
}

TEST_CASE("arguments reach the strategy trimmed, with whitespace inside one kept") {
  load_block_cyclic();
  CHECK(ts::Placement::parse("C( 0 ,  4  )").arguments() == "4");
  CHECK(ts::Placement::parse("BlockCyclic(dim = 1,\t3)").arguments() == "3");
  // "1 0" is not 10: the strategy sees the space and refuses.
  CHECK(contains(error_of("C(0, 1 0)"), "got '1 0'"));
  // A second argument is passed on (and this strategy, taking one, refuses it).
  CHECK(contains(error_of("C(0, 4, 2)"), "got '4,2'"));
  CHECK(contains(error_of("C(0, 4,)"), "got '4,'"));
}
