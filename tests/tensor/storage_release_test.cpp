// release_storage / restore_storage: bytes dropped in place and given back, with every handle valid.
#include "tensor/storage_release.hpp"

#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

namespace ts = tessera;

TEST_CASE("release: a released tensor's elements cannot be read, written or computed with") {
  ts::Tensor t = ts::from_values<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  ts::Tensor view = t.t();
  CHECK_FALSE(ts::storage_released(t));
  ts::release_storage(t);
  CHECK(ts::storage_released(t));
  CHECK(ts::storage_released(view));  // the view's storage is the same
  // The handles stay valid: their shapes are still known.
  CHECK(t.sizes() == ts::Shape{2, 3});
  CHECK(view.sizes() == ts::Shape{3, 2});
  CHECK_THROWS_WITH_AS(t.to_vector<float>(), doctest::Contains("were released"), ts::Error);
  CHECK_THROWS_WITH_AS(view.to_vector<float>(), doctest::Contains("were released"), ts::Error);
  CHECK_THROWS_WITH_AS(t + 1, doctest::Contains("were released"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::matmul(t, view), doctest::Contains("were released"), ts::Error);
  CHECK_THROWS_WITH_AS(t.fill_(0), doctest::Contains("were released"), ts::Error);
  CHECK_THROWS_WITH_AS(t.copy_(ts::zeros({2, 3})), doctest::Contains("were released"), ts::Error);
  CHECK_THROWS_WITH_AS(t.data_ptr(), doctest::Contains("were released"), ts::Error);
  CHECK_THROWS_WITH_AS(t.clone(), doctest::Contains("were released"), ts::Error);
  CHECK_THROWS_WITH_AS(t.to_string(), doctest::Contains("were released"), ts::Error);
  ts::release_storage(t);  // released already: nothing happens
  CHECK(ts::storage_released(t));
}

TEST_CASE("release: restore_storage gives the bytes back with the values, seen through views") {
  ts::Tensor t = ts::from_values<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  ts::Tensor view = t.t();
  ts::release_storage(t);
  ts::restore_storage(t, ts::from_values<float>({10, 20, 30, 40, 50, 60}, {2, 3}));
  CHECK_FALSE(ts::storage_released(t));
  CHECK(t.to_vector<float>() == std::vector<float>{10, 20, 30, 40, 50, 60});
  CHECK(view.to_vector<float>() == std::vector<float>{10, 40, 20, 50, 30, 60});
  // Values from a non-contiguous tensor are copied in row-major order.
  ts::release_storage(view);
  ts::restore_storage(t, ts::from_values<float>({1, 2, 3, 4, 5, 6}, {3, 2}).t());
  CHECK(t.to_vector<float>() == std::vector<float>{1, 3, 5, 2, 4, 6});
  // Written again after the restore: the tensor is an ordinary one.
  t.fill_(7);
  CHECK(view.to_vector<float>() == std::vector<float>(6, 7));
}

TEST_CASE("release: backward reads the restored values of a tensor autograd saved") {
  ts::Tensor x = ts::from_values<float>({1, 2, 3}, {3});
  x.set_requires_grad(true);
  ts::Tensor w = ts::from_values<float>({4, 5, 6}, {3});
  ts::Tensor y = x * w;  // saves w: dy/dx = w
  ts::release_storage(w);
  ts::restore_storage(w, ts::from_values<float>({7, 8, 9}, {3}));
  y.sum().backward();
  // The gradient is the restored w, not the one released: backward read the new bytes.
  CHECK(x.grad().to_vector<float>() == std::vector<float>{7, 8, 9});
  CHECK(w.version() == 0);  // a restore is not a write autograd refuses
}

TEST_CASE("release: backward through a saved tensor that is still released is an error, not garbage") {
  ts::Tensor x = ts::from_values<float>({1, 2}, {2});
  x.set_requires_grad(true);
  ts::Tensor w = ts::from_values<float>({3, 4}, {2});
  ts::Tensor y = (x * w).sum();
  ts::release_storage(w);
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("were released"), ts::Error);
}

TEST_CASE("release: every shard of a local tensor, restored from local values") {
  ts::LocalMode mode(2);
  ts::Tensor t = ts::rank_map([](int r) { return ts::full({r + 1}, r + 1.0); });  // {1}, {2, 2}
  ts::release_storage(t);
  CHECK(ts::storage_released(t));
  CHECK_THROWS_WITH_AS(t * 2, doctest::Contains("were released"), ts::Error);
  ts::Tensor values = ts::rank_map([](int r) { return ts::full({r + 1}, 10.0 * (r + 1)); });
  ts::restore_storage(t, values);
  CHECK(t.shard(0).to_vector<float>() == std::vector<float>{10});
  CHECK(t.shard(1).to_vector<float>() == std::vector<float>{20, 20});
}

TEST_CASE("release: a shared replica's release leaves the other ranks' bytes alone") {
  ts::LocalMode mode(2);
  ts::Tensor a = ts::ones({3});
  REQUIRE(a.shard(0).current_address() == a.shard(1).current_address());
  ts::Tensor only_rank0 = a.shard(0);
  {
    auto off = mode.disable();
    ts::release_storage(only_rank0);
  }
  CHECK(ts::storage_released(a.shard(0)));
  CHECK_FALSE(ts::storage_released(a.shard(1)));
  CHECK_FALSE(ts::storage_released(a));  // not every shard is
  CHECK(a.shard(1).to_vector<float>() == std::vector<float>{1, 1, 1});
}

TEST_CASE("release: restore_storage refuses what does not match, before changing anything") {
  ts::Tensor t = ts::from_values<float>({1, 2, 3, 4}, {2, 2});
  CHECK_THROWS_WITH_AS(ts::restore_storage(t, ts::zeros({2, 2})), doctest::Contains("is not released"),
                       ts::Error);
  ts::release_storage(t);
  CHECK_THROWS_WITH_AS(ts::restore_storage(t, ts::zeros({4})),
                       doctest::Contains("has shape [2, 2] but the values have shape [4]"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::restore_storage(t, ts::zeros({2, 2}, ts::TensorOptions().dtype(ts::kFloat64))),
                       doctest::Contains("the tensor is float32 but the values are float64"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::restore_storage(t, ts::local_tensor({{0, ts::zeros({2, 2})}})),
                       doctest::Contains("the tensor is dense but the values are local"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::restore_storage(t, ts::Tensor()),
                       doctest::Contains("the values is an undefined tensor"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::restore_storage(t[0], ts::zeros({2})),
                       doctest::Contains("covers 8 of its storage's 16 bytes"), ts::Error);
  CHECK(ts::storage_released(t));  // every refusal left it as it was
  ts::Tensor lt = ts::local_tensor({{0, ts::zeros({2})}, {1, ts::zeros({2})}});
  ts::release_storage(lt);
  CHECK_THROWS_WITH_AS(ts::restore_storage(lt, ts::local_tensor({{0, ts::zeros({2})}, {2, ts::zeros({2})}})),
                       doctest::Contains("over ranks {0, 1} but the values over ranks {0, 2}"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::release_storage(ts::Tensor()), doctest::Contains("undefined"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::storage_released(ts::Tensor()), doctest::Contains("undefined"), ts::Error);
}

TEST_CASE("release: a tensor whose address was handed out is not released") {
  ts::Tensor t = ts::zeros({4});
  const void* address = t.data_ptr();
  CHECK(address != nullptr);
  CHECK_THROWS_WITH_AS(ts::release_storage(t), doctest::Contains("was handed out"), ts::Error);
  CHECK_FALSE(ts::storage_released(t));
  CHECK(t.to_vector<float>() == std::vector<float>(4, 0.0f));
}

TEST_CASE("release: a memory counter sees the bytes leave and come back") {
  ts::LocalMode mode(2);
  ts::MemoryCounter counter;
  ts::Tensor w = ts::zeros({3, 4});  // 48 bytes per rank
  ts::tag_memory(w, "parameters");
  ts::Tensor view = w[0];
  ts::release_storage(view);
  CHECK(counter.current_bytes("parameters", 0) == 0);
  CHECK(counter.current_bytes("parameters", 1) == 0);
  CHECK(counter.peak_bytes("parameters") == 48);
  ts::Tensor gathered = ts::ones({3, 4});  // 48 more per rank while w is released
  CHECK(counter.current_bytes("", 1) == 48);
  ts::restore_storage(w, gathered);
  CHECK(counter.current_bytes("parameters", 0) == 48);
  CHECK(counter.current_bytes("", 0) == 96);
  CHECK(counter.peak_bytes("", 0) == 96);
  w = ts::Tensor();  // the view still holds the storage
  CHECK(counter.current_bytes("parameters", 1) == 48);
  view = ts::Tensor();
  CHECK(counter.current_bytes("parameters") == 0);
}
