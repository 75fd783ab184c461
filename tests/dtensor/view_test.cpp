// view on DTensors accepts every view PyTorch accepts: an identity view, inserting or dropping a
// dim of size 1, flattening with the shard on the first (outermost) or a later flattened dim,
// splitting a sharded dim. A shard the view's layout can follow stays (no communication, the
// placements PyTorch gives); one it cannot is gathered to Replicate first. Checked against the
// plain tensor's view and an independent layout oracle, on 1, 3 and 7 ranks, with even, uneven and
// empty shards.
#include <doctest/doctest.h>

#include <string>
#include <tessera/tessera.hpp>
#include <vector>

#include "layout_oracle.hpp"

namespace ts = tessera;
using layout_oracle::check_layout;

namespace {

// 0, 1, 2, ... scaled and shifted so that no value is its own index: a misplaced block shows.
ts::Tensor view_input(const ts::Shape& shape) {
  ts::DisabledLocalMode plain;
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return (ts::arange(n).to(ts::kFloat32) * 3.0 - 7.0).reshape(shape);
}

struct ViewCase {
  ts::Shape shape;
  ts::Placement placement;
  ts::Shape target;
};

std::string view_shape_text(const ts::Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string describe(const ViewCase& c, int ranks) {
  return view_shape_text(c.shape) + " " + c.placement.to_string() + " on " + std::to_string(ranks) +
         " ranks to " + view_shape_text(c.target);
}

// The view's values and layout against the plain tensor's view; returns its placement.
ts::Placement check_view(const ViewCase& c, int ranks) {
  INFO(describe(c, ranks));
  ts::LocalMode mode(ranks);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {ranks});
  const ts::Tensor x = view_input(c.shape);
  const ts::DTensor d = ts::distribute_tensor(x, mesh, {c.placement});
  const ts::DTensor v = d.view(c.target);
  ts::Tensor expected;
  {
    ts::DisabledLocalMode plain;
    expected = x.view(c.target);
  }
  check_layout(v, expected, 0.0, "view");
  CHECK(ts::equal(v.full_tensor().reconcile(), expected));
  return v.placements()[0];
}

// Whether the view of `c` on `ranks` ranks communicates.
int64_t calls_of_view(const ViewCase& c, int ranks) {
  ts::LocalMode mode(ranks);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {ranks});
  const ts::DTensor d = ts::distribute_tensor(view_input(c.shape), mesh, {c.placement});
  const ts::CommCounter counter;
  (void)ts::view(d, c.target);
  return counter.calls();
}

}  // namespace

TEST_CASE("views that keep the placement PyTorch keeps, without communication") {
  // (case, the placement PyTorch's view rule gives the result)
  const std::vector<std::pair<ViewCase, ts::Placement>> cases = {
      // identity views, also of a size-1 sharded dim (1 row over 3 ranks: 1,0,0)
      {{{1, 5}, ts::Shard(0), {1, 5}}, ts::Shard(0)},
      {{{1, 5}, ts::Shard(1), {1, 5}}, ts::Shard(1)},
      {{{7, 5}, ts::Shard(0), {7, 5}}, ts::Shard(0)},
      // a size-1 dim inserted: shards keep their dim, renumbered where the new dim comes first
      {{{1, 5}, ts::Shard(0), {1, 5, 1}}, ts::Shard(0)},
      {{{1, 5}, ts::Shard(1), {1, 5, 1}}, ts::Shard(1)},
      {{{1, 5}, ts::Replicate(), {1, 5, 1}}, ts::Replicate()},
      {{{1, 5}, ts::Shard(1), {1, 1, 5}}, ts::Shard(2)},
      {{{2, 5}, ts::Shard(0), {1, 2, 5}}, ts::Shard(1)},  // 2 rows over 3 ranks: 1,1,0
      {{{2, 5}, ts::Shard(0), {2, 5, 1}}, ts::Shard(0)},
      {{{7, 5}, ts::Shard(1), {7, 1, 5}}, ts::Shard(2)},
      // a size-1 dim dropped
      {{{7, 1, 5}, ts::Shard(2), {7, 5}}, ts::Shard(1)},
      {{{7, 5, 1}, ts::Shard(0), {7, 5}}, ts::Shard(0)},
      // flattening with the shard on the first flattened dim, evenly split on every world size
      {{{21, 5}, ts::Shard(0), {105}}, ts::Shard(0)},
      {{{42, 2, 3}, ts::Shard(0), {42, 6}}, ts::Shard(0)},
  };
  for (const auto& [view_case, placement] : cases)
    for (int ranks : {1, 3, 7}) {
      const ViewCase& c = view_case;  // named again: clang 14 cannot capture a structured binding
      CAPTURE(describe(c, ranks));
      const ts::Placement got = check_view(c, ranks);
      // One rank holds everything, so any placement of it says the same: only more ranks must match.
      if (ranks > 1) CHECK(got == placement);
      CHECK(calls_of_view(c, ranks) == 0);
    }
}

TEST_CASE("views whose shard cannot follow gather it first, as PyTorch's view does") {
  const std::vector<ViewCase> cases = {
      // the shard on a later flattened dim ([7,5] S(1) -> [35]: PyTorch replicates it)
      {{7, 5}, ts::Shard(1), {35}},
      {{2, 5}, ts::Shard(1), {10}},
      {{3, 4, 5}, ts::Shard(2), {3, 20}},
      // the first flattened dim, but uneven blocks that no split of the flat dim gives
      {{7, 5}, ts::Shard(0), {35}},
      {{2, 5}, ts::Shard(0), {10}},  // empty shard on 3 ranks
      // a sharded size-1 dim dropped
      {{1, 5}, ts::Shard(0), {5}},
      // splitting a sharded dim into blocks that do not line up
      {{35}, ts::Shard(0), {7, 5}},
      {{6, 4}, ts::Shard(1), {6, 2, 2}},
  };
  for (const ViewCase& c : cases)
    for (int ranks : {1, 3, 7}) {
      CAPTURE(describe(c, ranks));
      const ts::Placement got = check_view(c, ranks);
      if (ranks > 1 && got.is_replicate()) CHECK(calls_of_view(c, ranks) > 0);
    }
  // On 3 ranks these are gathered: the values were checked above, the placement is Replicate.
  ts::LocalMode mode(3);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
  const ts::DTensor d = ts::distribute_tensor(view_input({7, 5}), mesh, {ts::Shard(1)});
  CHECK(d.view({35}).placements() == ts::Placements{ts::Replicate()});
  CHECK(ts::view(d, {-1}).placements() == ts::Placements{ts::Replicate()});
}

TEST_CASE("a view of an empty DTensor keeps its shape and has no elements") {
  for (int ranks : {1, 3, 7}) {
    CAPTURE(ranks);
    ts::LocalMode mode(ranks);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {ranks});
    const ts::Tensor x = view_input({0, 5});
    const ts::DTensor v = ts::distribute_tensor(x, mesh, {ts::Shard(1)}).view({5, 0, 1});
    CHECK(v.shape() == ts::Shape{5, 0, 1});
    CHECK(v.full_tensor().reconcile().numel() == 0);
  }
}
