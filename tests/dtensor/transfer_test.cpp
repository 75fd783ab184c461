// Tensor::to(backend) and to(TensorOptions): tensors move between backends through the backends'
// copy functions ("cpu2" is a second instance of the CPU backend built for test_dtensor), and
// distribute_tensor moves a tensor onto its mesh's backend, as PyTorch moves it to the mesh's device.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

void load_cpu2() { ts::load_plugin(TESSERA_CPU2_PLUGIN_FILE); }

// Distinct values 0.5, 1.5, ... in `shape` on the default backend.
ts::Tensor counting(const ts::Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return (ts::arange(n, ts::kFloat64) + 0.5).reshape(shape);
}

std::vector<double> values_of(const ts::Tensor& t) { return t.to("cpu").to_vector<double>(); }

}  // namespace

TEST_CASE("to(backend) copies values, shape and dtype onto the other backend") {
  load_cpu2();
  const ts::Tensor x = counting({3, 4});
  const ts::Tensor moved = x.to("cpu2");
  CHECK(moved.backend() == "cpu2");
  CHECK(moved.sizes() == ts::Shape{3, 4});
  CHECK(moved.dtype() == ts::kFloat64);
  CHECK(moved.data_ptr() != x.data_ptr());
  CHECK(moved.to_vector<double>() == x.to_vector<double>());
  // Back again, and a strided view (transposed, then a flipped slice) arrives contiguous.
  CHECK(ts::equal(moved.to("cpu"), x));
  const ts::Tensor view = x.t().flip({0}).slice(1, 1, 3);
  const ts::Tensor view_moved = view.to("cpu2");
  CHECK(view_moved.is_contiguous());
  CHECK(view_moved.to_vector<double>() == view.contiguous().to_vector<double>());
  // Already there: the same tensor, no copy.
  CHECK(x.to("cpu").data_ptr() == x.data_ptr());
  // Empty and 0-d tensors, and every dtype.
  CHECK(ts::zeros({0, 3}).to("cpu2").sizes() == ts::Shape{0, 3});
  CHECK(ts::tensor(2.5f).to("cpu2").item<float>() == 2.5f);
  const ts::Tensor flags = ts::tensor({true, false, true});
  CHECK(flags.to("cpu2").to_vector<bool>() == std::vector<bool>{true, false, true});
  const ts::Tensor ints = ts::arange(-3, 4, 1, ts::kInt32);
  CHECK(ints.to("cpu2").to_vector<int32_t>() == std::vector<int32_t>{-3, -2, -1, 0, 1, 2, 3});
}

TEST_CASE("to(TensorOptions) changes backend and dtype at once, leaving unset options alone") {
  load_cpu2();
  const ts::Tensor x = counting({2, 3});
  const ts::Tensor both = x.to(ts::TensorOptions(ts::kFloat32).backend("cpu2"));
  CHECK(both.backend() == "cpu2");
  CHECK(both.dtype() == ts::kFloat32);
  CHECK(both.to_vector<float>() == x.to(ts::kFloat32).to_vector<float>());
  CHECK(x.to(ts::TensorOptions().backend("cpu2")).dtype() == ts::kFloat64);
  CHECK(x.to(ts::TensorOptions(ts::kInt64)).backend() == "cpu");
}

TEST_CASE("a local tensor moves every shard") {
  load_cpu2();
  ts::LocalMode mode(3);
  const ts::Tensor local = ts::rank_map([](int r) { return counting({2}) * static_cast<double>(r + 1); });
  const ts::Tensor moved = local.to("cpu2");
  for (int r = 0; r < 3; ++r) {
    CHECK(moved.shard(r).backend() == "cpu2");
    CHECK(values_of(moved.shard(r)) == std::vector<double>{0.5 * (r + 1), 1.5 * (r + 1)});
  }
}

TEST_CASE("to(backend) is differentiable: the gradient comes back to the input's backend") {
  load_cpu2();
  const ts::Tensor x = counting({4}).set_requires_grad(true);
  const ts::Tensor y = (x.to("cpu2") * 3.0).sum();
  CHECK(y.backend() == "cpu2");
  y.backward();
  REQUIRE(x.grad().defined());
  CHECK(x.grad().backend() == "cpu");
  CHECK(x.grad().to_vector<double>() == std::vector<double>{3.0, 3.0, 3.0, 3.0});
}

TEST_CASE("distribute_tensor moves a tensor onto its mesh's backend") {
  load_cpu2();
  ts::LocalMode mode(3);
  ts::DeviceMesh mesh = ts::init_device_mesh("cpu2", {3});
  const ts::Tensor x = counting({7, 2});
  const ts::DTensor d = ts::distribute_tensor(x, mesh, {ts::Shard(0)});
  for (int r = 0; r < 3; ++r) CHECK(d.to_local().shard(r).backend() == "cpu2");
  CHECK(values_of(d.full_tensor()) == x.to_vector<double>());
}

TEST_CASE("moving to an unknown backend, or values off a shapes-only one, is a clear error") {
  const ts::Tensor x = counting({2});
  CHECK_THROWS_WITH_AS(x.to("no_such_backend"), doctest::Contains("no backend named 'no_such_backend'"),
                       ts::Error);
  const ts::Tensor shapes = x.to("meta");
  CHECK(shapes.backend() == "meta");
  CHECK(shapes.sizes() == ts::Shape{2});
  CHECK_THROWS_WITH_AS(shapes.to("cpu"), doctest::Contains("holds shapes only, so it has no values to move"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::Tensor().to("cpu"), doctest::Contains("to"), ts::Error);
}
