// dist::functional::all_to_all_single (uneven and empty splits, given as local ints) and
// dist::functional::broadcast (every root position, groups).
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

#include "oracle.hpp"

namespace ts = tessera;
namespace fn = ts::dist::functional;

namespace {

using Matrix = std::vector<std::vector<int64_t>>;  // send[i][j]: rows rank i sends rank j

// input_splits[j] on rank i is send[i][j]; output_splits[i] on rank j is send[i][j].
std::vector<ts::SymInt> input_splits(const Matrix& send) {
  std::vector<ts::SymInt> splits;
  for (size_t j = 0; j < send.size(); ++j) {
    std::map<int, int64_t> per_rank;
    for (size_t i = 0; i < send.size(); ++i) per_rank[static_cast<int>(i)] = send[i][j];
    splits.emplace_back(ts::LocalInt(per_rank));
  }
  return splits;
}
std::vector<ts::SymInt> output_splits(const Matrix& send) {
  std::vector<ts::SymInt> splits;
  for (size_t i = 0; i < send.size(); ++i) {
    std::map<int, int64_t> per_rank;
    for (size_t j = 0; j < send.size(); ++j) per_rank[static_cast<int>(j)] = send[i][j];
    splits.emplace_back(ts::LocalInt(per_rank));
  }
  return splits;
}

std::map<int, ts::Shape> input_shapes(const Matrix& send, int64_t width) {
  std::map<int, ts::Shape> shapes;
  for (size_t i = 0; i < send.size(); ++i) {
    int64_t rows = 0;
    for (int64_t s : send[i]) rows += s;
    shapes[static_cast<int>(i)] = {rows, width};
  }
  return shapes;
}

void check_all_to_all(const Matrix& send, int64_t width) {
  const oracle::Shards x = oracle::distinct(input_shapes(send, width), 0.0);
  const std::vector<ts::SymInt> in = input_splits(send), out = output_splits(send);
  oracle::check_op([&](const ts::Tensor& t) { return fn::all_to_all_single(t, out, in); },
                   oracle::all_to_all(x, send), x, "AllToAllBackward");
}

}  // namespace

TEST_CASE("functional all_to_all_single with uneven splits") {
  SUBCASE("world 1") { check_all_to_all({{3}}, 2); }
  SUBCASE("world 3, some blocks empty") { check_all_to_all({{1, 0, 2}, {3, 1, 0}, {0, 2, 2}}, 2); }
  SUBCASE("world 7, rank 6 sends and receives nothing (an empty shard)") {
    Matrix send(7, std::vector<int64_t>(7, 0));
    for (size_t i = 0; i < 6; ++i)
      for (size_t j = 0; j < 6; ++j) send[i][j] = static_cast<int64_t>((3 * i + 5 * j) % 4);
    check_all_to_all(send, 1);
  }
  SUBCASE("world 3, rows of a 3-d tensor") {
    const Matrix send = {{2, 1, 0}, {0, 0, 1}, {1, 1, 1}};
    std::map<int, ts::Shape> shapes = input_shapes(send, 2);
    for (auto& [rank, shape] : shapes) shape.push_back(2);
    const oracle::Shards x = oracle::distinct(shapes, 0.0);
    oracle::check_op(
        [&](const ts::Tensor& t) {
          return fn::all_to_all_single(t, output_splits(send), input_splits(send));
        },
        oracle::all_to_all(x, send), x, "AllToAllBackward");
  }
}

TEST_CASE("functional all_to_all_single with equal splits (empty lists)") {
  for (int world : {1, 3, 7}) {
    CAPTURE(world);
    const oracle::Shards x = oracle::distinct(oracle::same_shape(world, {2 * world, 2}), 0.0);
    const Matrix send(static_cast<size_t>(world), std::vector<int64_t>(static_cast<size_t>(world), 2));
    oracle::check_op([](const ts::Tensor& t) { return fn::all_to_all_single(t); },
                     oracle::all_to_all(x, send), x, "AllToAllBackward", world != 7);
  }
}

TEST_CASE("functional all_to_all_single with equal input splits of different row counts") {
  // Rank 0 has 2 rows and sends 1 to each; rank 1 has 4 and sends 2 to each. Only the output
  // splits are given; the backward must send rank 1 back 4 rows though its gradient's equal split
  // would be 3 and 3.
  const Matrix send = {{1, 1}, {2, 2}};
  const oracle::Shards x = oracle::distinct(input_shapes(send, 3), 0.0);
  const std::vector<ts::SymInt> out = output_splits(send);
  oracle::check_op([&](const ts::Tensor& t) { return fn::all_to_all_single(t, out, {}); },
                   oracle::all_to_all(x, send), x, "AllToAllBackward");
}

TEST_CASE("functional all_to_all_single with only input splits given") {
  const Matrix send = {{2, 2, 2}, {2, 2, 2}, {2, 2, 2}};
  const oracle::Shards x = oracle::distinct(input_shapes(send, 1), 0.0);
  const std::vector<ts::SymInt> in = input_splits(send);
  oracle::check_op([&](const ts::Tensor& t) { return fn::all_to_all_single(t, {}, in); },
                   oracle::all_to_all(x, send), x, "AllToAllBackward");
}

TEST_CASE("functional all_to_all_single: splits that disagree are an error") {
  const Matrix send = {{1, 2}, {2, 1}};
  ts::Tensor x = oracle::to_local(oracle::distinct(input_shapes(send, 1), 0.0)).set_requires_grad(true);
  Matrix wrong = send;
  wrong[0][1] = 1;  // rank 1 expects 1 row from rank 0, which sends 2
  CHECK_THROWS_WITH_AS(
      fn::all_to_all_single(x, output_splits(wrong), input_splits(send)),
      doctest::Contains("dist::functional::all_to_all_single: all_to_all_single: rank 0 sends 2 "
                        "rows to rank 1, but rank 1 expects 1 rows"),
      ts::Error);
}

TEST_CASE("functional broadcast from every position on worlds 1, 3, 7") {
  for (int world : {1, 3, 7}) {
    const oracle::Shards x = oracle::distinct(oracle::same_shape(world, {2, 2}), 0.0);
    for (int src : {0, world / 2, world - 1}) {
      CAPTURE(world);
      CAPTURE(src);
      oracle::check_op([src](const ts::Tensor& t) { return fn::broadcast(t, src); },
                       oracle::broadcast(x, oracle::whole(world), static_cast<size_t>(src)), x,
                       "BroadcastBackward");
    }
  }
}

TEST_CASE("functional broadcast on a group of world 4") {
  const oracle::Shards x = oracle::distinct(oracle::same_shape(4, {3}), 0.0);
  SUBCASE("sibling fibres, src 1: roots are ranks 2 and 3") {
    const ts::ProcessGroup group = ts::ProcessGroup::from_fibres({{0, 2}, {1, 3}});
    oracle::check_op([&](const ts::Tensor& t) { return fn::broadcast(t, 1, group); },
                     oracle::broadcast(x, {{0, 2}, {1, 3}}, 1), x, "BroadcastBackward");
  }
  SUBCASE("one fibre 2, 0, 3, 1, src 0: the root is rank 2") {
    const ts::ProcessGroup group({2, 0, 3, 1});
    oracle::check_op([&](const ts::Tensor& t) { return fn::broadcast(t, 0, group); },
                     oracle::broadcast(x, {{2, 0, 3, 1}}, 0), x, "BroadcastBackward");
  }
}

TEST_CASE("functional broadcast of empty shards, and a root outside the group") {
  const oracle::Shards x = oracle::distinct(oracle::same_shape(3, {0}), 0.0);
  oracle::check_op([](const ts::Tensor& t) { return fn::broadcast(t, 1); },
                   oracle::broadcast(x, oracle::whole(3), 1), x, "BroadcastBackward");
  ts::Tensor t = oracle::to_local(oracle::distinct(oracle::same_shape(3, {2}), 0.0));
  CHECK_THROWS_WITH_AS(fn::broadcast(t, 3), doctest::Contains("src 3 is not a group rank; expected 0..2"),
                       ts::Error);
}
