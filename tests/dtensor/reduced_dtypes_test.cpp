// DTensors of bfloat16 and int8: the sharded ops give the unsharded op's values where no reduction
// crosses ranks (bit for bit), and a Partial result is reduced in the element type.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>
#include <vector>

namespace ts = tessera;

namespace {

// Every value of a two-byte-float tensor, exactly (float32 holds them all).
std::vector<float> exact_values(const ts::Tensor& t) { return t.to(ts::kFloat32).to_vector<float>(); }

ts::Tensor small_integers(const ts::Shape& shape, int64_t salt) {
  // (i * 7 + salt) % 11 - 5: integers in [-5, 5], exact in bfloat16 and in every sum here.
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>((i * 7 + salt) % 11 - 5));
  return ts::from_values(v, shape);
}

}  // namespace

TEST_CASE(
    "bfloat16 DTensor ops: Shard(0) rows give the dense op's bits, a Partial sum is reduced in bfloat16") {
  ts::LocalMode mode(4);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4});
  ts::Tensor x, w, b;
  {
    auto off = mode.disable();
    x = (small_integers({8, 6}, 1) * 0.5).to(ts::kBFloat16);
    w = small_integers({6, 3}, 2).to(ts::kBFloat16);
    b = (small_integers({3}, 3) * 0.5).to(ts::kBFloat16);
  }
  const ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  const ts::DTensor y = ts::relu(ts::matmul(dx, ts::distribute_tensor(w, mesh, {ts::Replicate()})) +
                                 ts::distribute_tensor(b, mesh, {ts::Replicate()}));
  CHECK(y.dtype() == ts::kBFloat16);
  CHECK(y.placements() == ts::Placements{ts::Shard(0)});
  const ts::Tensor full = y.full_tensor().reconcile();
  ts::Tensor dense;
  {
    auto off = mode.disable();
    dense = ts::relu(ts::matmul(x, w) + b);
  }
  CHECK(exact_values(full) == exact_values(dense));

  // S(1) x S(0): each rank's partial product, summed across ranks in bfloat16 by the collective.
  // Every product and partial sum is a multiple of 1/2 below 128 in magnitude, exact in bfloat16's
  // 8 bits, so the reduction order cannot show and the result equals the dense product.
  const ts::DTensor p = ts::matmul(ts::distribute_tensor(x, mesh, {ts::Shard(1)}),
                                   ts::distribute_tensor(w, mesh, {ts::Shard(0)}));
  CHECK(p.placements() == ts::Placements{ts::Partial()});
  CHECK(p.dtype() == ts::kBFloat16);
  ts::Tensor dense_product;
  {
    auto off = mode.disable();
    dense_product = ts::matmul(x, w);
  }
  CHECK(exact_values(p.full_tensor().reconcile()) == exact_values(dense_product));
  // DTensor::to keeps the placements.
  const ts::DTensor f = y.to(ts::kFloat32);
  CHECK(f.placements() == ts::Placements{ts::Shard(0)});
  CHECK(exact_values(f.full_tensor().reconcile()) == exact_values(dense));
}

TEST_CASE("int8 DTensor addition wraps like the dense one") {
  ts::LocalMode mode(2);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  ts::Tensor x;
  {
    auto off = mode.disable();
    x = ts::tensor({100, -100, 127, 5}).to(ts::kInt8);
  }
  const ts::DTensor d = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  const ts::Tensor sum = (d + d).full_tensor().reconcile();
  CHECK(sum.dtype() == ts::kInt8);
  CHECK(sum.to(ts::kInt32).to_vector<int32_t>() == std::vector<int32_t>{-56, 56, -2, 10});
}
