// A meta tensor has no values: every way of reading them is an error that names the meta backend
// and the reading op, and mixing a meta and a cpu tensor in one op is an error naming both.
#include <sstream>

#include "meta_test_support.hpp"

using namespace meta_test;

TEST_CASE("item, to_vector and printing of a meta tensor are errors naming the meta backend") {
  const ts::Tensor one = ts::ones({1}, on("meta"));
  const ts::Tensor many = ts::randn({2, 3}, on("meta"));
  check_values_refused(error_of([&] { one.item(); }), "item");
  check_values_refused(error_of([&] { one.item<float>(); }), "item");
  check_values_refused(error_of([&] { many.to_vector<float>(); }), "to_vector");
  check_values_refused(error_of([&] { many.to_vector<int64_t>(); }), "to_vector");
  check_values_refused(error_of([&] { many.to_string(); }), "printing");
  check_values_refused(error_of([&] {
                         std::ostringstream out;
                         out << many;
                       }),
                       "printing");
  // The message says what the tensor is.
  CHECK(contains(error_of([&] { many.to_vector<float>(); }), "(a float32 tensor of shape [2, 3])"));
  // Also for dtypes other than float32, views and empty tensors.
  check_values_refused(
      error_of([] { ts::full({2}, true, ts::TensorOptions().backend("meta")).to_vector<bool>(); }),
      "to_vector");
  check_values_refused(error_of([&] { many.t().select(0, 1).to_vector<double>(); }), "to_vector");
  check_values_refused(error_of([] { ts::zeros({0}, on("meta")).to_vector<float>(); }), "to_vector");
  // item() of a many-element tensor keeps its own (shape) error.
  CHECK(contains(error_of([&] { many.item(); }), "item: the tensor has 6 elements"));
}

TEST_CASE("comparisons whose answer needs values are errors on meta") {
  const ts::Tensor a = ts::randn({3}, on("meta"));
  check_values_refused(error_of([&] { ts::equal(a, a); }), "item");
  check_values_refused(error_of([&] { ts::allclose(a, a); }), "item");
  // The element-wise comparison itself is fine: a bool meta tensor.
  const ts::Tensor eq = a == a;
  CHECK(eq.backend() == "meta");
  CHECK(eq.dtype() == ts::kBool);
  // equal() of different shapes needs no values (false on cpu and meta alike).
  CHECK_FALSE(ts::equal(a, ts::randn({4}, on("meta"))));
  CHECK_FALSE(ts::equal(ts::randn({3}), ts::randn({4})));
}

TEST_CASE("values of local meta tensors and of meta DTensors cannot be read either") {
  ts::LocalMode mode(3);
  const ts::Tensor local = ts::randn({2}, on("meta"));
  REQUIRE(local.is_local());
  check_values_refused(error_of([&] { local.to_vector<float>(); }), "reconcile");
  check_values_refused(error_of([&] { local.reconcile(); }), "reconcile");
  check_values_refused(error_of([&] { local.sum().item(); }), "item");
  check_values_refused(error_of([&] { local.to_string(); }), "printing");
  const ts::DeviceMesh mesh = ts::init_device_mesh("meta", {3});
  const ts::DTensor d = ts::distribute_tensor(ts::randn({6, 2}, on("meta")), mesh, {ts::Shard(0)});
  check_values_refused(error_of([&] { d.full_tensor().reconcile(); }), "reconcile");
  // Describing a DTensor needs no values.
  CAPTURE(d.to_string());
  CHECK(contains(d.to_string(), "DTensor(shape=[6, 2], placements="));
}

TEST_CASE("a meta and a cpu tensor in one op is an error naming both backends") {
  const ts::Tensor meta = ts::randn({2, 2}, on("meta"));
  const ts::Tensor cpu = ts::randn({2, 2});
  for (const std::string& message :
       {error_of([&] { ts::add(meta, cpu); }), error_of([&] { ts::add(cpu, meta); }),
        error_of([&] { ts::matmul(cpu, meta); }), error_of([&] {
          ts::cat({meta, cpu});
        }),
        error_of([&] { ts::Tensor(cpu).copy_(meta); }), error_of([&] { ts::Tensor(meta).copy_(cpu); }),
        error_of([&] { ts::maximum(meta, cpu); })}) {
    CAPTURE(message);
    CHECK(contains(message, "tensors are on different backends"));
    CHECK(contains(message, "'meta'"));
    CHECK(contains(message, "'cpu'"));
  }
}

TEST_CASE("a meta tensor of 1024 x 16384^2 floats is only its shape, overflowing shapes are refused") {
  // 1 TiB of float32 across 1024 ranks' worth: nothing is allocated, so it is made at once.
  const ts::Tensor huge = ts::empty({1024, 16384, 16384}, on("meta"));
  CHECK(huge.numel() == int64_t{1024} * 16384 * 16384);
  CHECK(ts::sum(huge, {0}).sizes() == ts::Shape{16384, 16384});
  CHECK(ts::matmul(huge, huge.transpose(1, 2)).sizes() == ts::Shape{1024, 16384, 16384});
  // Shape arithmetic is checked as everywhere: 2^62 x 4 elements overflow int64, 2^61 float32
  // elements overflow the byte count.
  const int64_t big = int64_t{1} << 62;
  CHECK(contains(error_of([&] { ts::zeros({big, 4}, on("meta")); }), "has too many elements"));
  CHECK(contains(error_of([&] { ts::zeros({int64_t{1} << 60, 2}, on("meta")); }), "the byte size of shape"));
  CHECK(contains(error_of([&] {
                   huge.expand({int64_t{1} << 30, 1024, 16384, 16384});
                 }),
                 "too many elements"));
}
