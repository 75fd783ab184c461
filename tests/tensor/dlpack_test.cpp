// DLPack export and import share memory: writes through one side are read through the other, the
// layout (strides, offsets, negative strides) survives both ways, and the owner's deleter runs once.
#include <dlpack/dlpack.h>

#include <cstdint>
#include <vector>

#include "tensor/tensor_impl.hpp"
#include "test_util.hpp"

namespace ts = tessera;

namespace {

// A producer's array: `values` laid out as `shape`/`strides`, whose deleter counts its calls.
struct ForeignArray {
  std::vector<float> values;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int deletions = 0;
  DLManagedTensor managed{};

  DLManagedTensor* hand_out(int64_t element_offset = 0, bool with_strides = true) {
    managed.dl_tensor.data = values.data();
    managed.dl_tensor.byte_offset = static_cast<uint64_t>(element_offset) * sizeof(float);
    managed.dl_tensor.device = {kDLCPU, 0};
    managed.dl_tensor.ndim = static_cast<int>(shape.size());
    managed.dl_tensor.dtype = {kDLFloat, 32, 1};
    managed.dl_tensor.shape = shape.data();
    managed.dl_tensor.strides = with_strides ? strides.data() : nullptr;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) {
      ++static_cast<ForeignArray*>(self->manager_ctx)->deletions;
    };
    return &managed;
  }
};

float element(const DLTensor& dl, std::vector<int64_t> index) {
  int64_t at = 0;
  for (size_t d = 0; d < index.size(); ++d) at += index[d] * dl.strides[d];
  return static_cast<const float*>(dl.data)[at];
}

}  // namespace

TEST_CASE("to_dlpack exports the tensor's own memory with its layout") {
  ts::Tensor x = ts::tensor({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  DLManagedTensor* managed = ts::to_dlpack(x);
  const DLTensor& dl = managed->dl_tensor;
  CHECK(dl.device.device_type == kDLCPU);
  CHECK(dl.ndim == 2);
  CHECK((dl.dtype.code == kDLFloat && dl.dtype.bits == 32 && dl.dtype.lanes == 1));
  CHECK(std::vector<int64_t>(dl.shape, dl.shape + 2) == std::vector<int64_t>{2, 3});
  CHECK(std::vector<int64_t>(dl.strides, dl.strides + 2) == std::vector<int64_t>{3, 1});
  CHECK(element(dl, {1, 2}) == 6.f);
  static_cast<float*>(dl.data)[1] = 20.f;  // a consumer's write
  test::check_values<float>(x, {2, 3}, {1, 20, 3, 4, 5, 6});
  // The export keeps the memory alive after the last handle is gone.
  x = ts::Tensor();
  CHECK(element(dl, {0, 1}) == 20.f);
  managed->deleter(managed);
}

TEST_CASE("to_dlpack of a transposed, sliced view points at its first element") {
  ts::Tensor base = ts::arange(12).to(ts::kFloat32).reshape({3, 4});
  ts::Tensor view = base.slice(1, 1, 4).t();  // [[1,5,9],[2,6,10],[3,7,11]]
  DLManagedTensor* managed = ts::to_dlpack(view);
  const DLTensor& dl = managed->dl_tensor;
  CHECK(std::vector<int64_t>(dl.strides, dl.strides + 2) == std::vector<int64_t>{1, 4});
  CHECK(dl.byte_offset == 0);
  CHECK(element(dl, {0, 0}) == 1.f);
  CHECK(element(dl, {2, 1}) == 7.f);
  CHECK(element(dl, {1, 2}) == 10.f);
  managed->deleter(managed);
}

TEST_CASE("to_dlpack refuses local tensors, undefined tensors and shapes-only tensors") {
  ts::Tensor local = ts::local_tensor({{0, ts::ones({2})}, {1, ts::zeros({2})}});
  CHECK_THROWS_WITH_AS(ts::to_dlpack(local), doctest::Contains("t.shard(rank)"), ts::Error);
  CHECK_THROWS_AS(ts::to_dlpack(ts::Tensor()), ts::Error);
  ts::Tensor shapes = ts::empty({4, 5}, ts::TensorOptions().backend("meta"));
  CHECK_THROWS_WITH_AS(ts::to_dlpack(shapes), doctest::Contains("shapes only"), ts::Error);
}

TEST_CASE("to_dlpack of a shared replica gives the consumer private bytes") {
  ts::Tensor original = ts::tensor({1.f, 2.f});
  ts::Tensor replica(original.impl()->replica());
  DLManagedTensor* managed = ts::to_dlpack(replica);
  static_cast<float*>(managed->dl_tensor.data)[0] = 9.f;
  test::check_values<float>(replica, {2}, {9, 2});
  test::check_values<float>(original, {2}, {1, 2});  // the other rank's copy is untouched
  managed->deleter(managed);
}

TEST_CASE("from_dlpack views foreign memory and releases it once") {
  ForeignArray array{{0, 1, 2, 3, 4, 5}, {2, 3}, {3, 1}};
  {
    ts::Tensor t = ts::from_dlpack(array.hand_out(0, /*with_strides=*/false));
    test::check_values<float>(t, {2, 3}, {0, 1, 2, 3, 4, 5});
    t.select(0, 1).fill_(7);  // writes reach the producer's memory
    CHECK(array.values == std::vector<float>{0, 1, 2, 7, 7, 7});
    ts::Tensor view = t.t();
    t = ts::Tensor();
    CHECK(array.deletions == 0);  // a view still holds it
    test::check_values<float>(view, {3, 2}, {0, 7, 1, 7, 2, 7});
  }
  CHECK(array.deletions == 1);
}

TEST_CASE("from_dlpack keeps column-major, offset and negative-stride layouts") {
  ForeignArray column_major{{0, 1, 2, 3, 4, 5}, {2, 3}, {1, 2}};
  test::check_values<float>(ts::from_dlpack(column_major.hand_out()), {2, 3}, {0, 2, 4, 1, 3, 5});
  // Elements 5, 4, 3 reached from offset 5 with stride -1 (a flipped producer view).
  ForeignArray flipped{{0, 1, 2, 3, 4, 5}, {3}, {-1}};
  {
    ts::Tensor f = ts::from_dlpack(flipped.hand_out(5));
    test::check_values<float>(f, {3}, {5, 4, 3});
    test::check_values<float>(f + 1.f, {3}, {6, 5, 4});
  }
  ForeignArray empty{{}, {0, 4}, {4, 1}};
  CHECK(ts::from_dlpack(empty.hand_out()).sizes() == ts::Shape{0, 4});
  CHECK(column_major.deletions == 1);
  CHECK(flipped.deletions == 1);
  CHECK(empty.deletions == 1);
}

TEST_CASE("from_dlpack of to_dlpack shares memory both ways") {
  ts::Tensor x = ts::tensor({int64_t{1}, int64_t{2}, int64_t{3}});
  ts::Tensor y = ts::from_dlpack(ts::to_dlpack(x));
  CHECK(y.dtype() == ts::kInt64);
  y.fill_(4);
  test::check_values<int64_t>(x, {3}, {4, 4, 4});
  ts::Tensor flags = ts::tensor({true, false});
  ts::Tensor back = ts::from_dlpack(ts::to_dlpack(flags));
  CHECK(back.dtype() == ts::kBool);
  test::check_values<bool>(back, {2}, {true, false});
}

TEST_CASE("from_dlpack rejects what it cannot share, naming it, and still releases it") {
  ForeignArray array{{0, 1, 2, 3}, {4}, {1}};
  DLManagedTensor* on_gpu = array.hand_out();
  on_gpu->dl_tensor.device = {kDLCUDA, 1};
  CHECK_THROWS_WITH_AS(ts::from_dlpack(on_gpu), doctest::Contains("device type 2 (id 1)"), ts::Error);
  DLManagedTensor* bytes = array.hand_out();
  bytes->dl_tensor.dtype = {kDLInt, 16, 1};  // int16: no Tessera dtype
  CHECK_THROWS_WITH_AS(ts::from_dlpack(bytes), doctest::Contains("{code 0, 16 bits, 1 lanes}"), ts::Error);
  DLManagedTensor* misaligned = array.hand_out();
  misaligned->dl_tensor.byte_offset = 2;
  CHECK_THROWS_WITH_AS(ts::from_dlpack(misaligned), doctest::Contains("not aligned"), ts::Error);
  std::vector<int64_t> many(17, 1);
  DLManagedTensor* deep = array.hand_out();
  deep->dl_tensor.ndim = 17;
  deep->dl_tensor.shape = many.data();
  deep->dl_tensor.strides = many.data();
  CHECK_THROWS_WITH_AS(ts::from_dlpack(deep), doctest::Contains("17 dims; expected 0 to 16"), ts::Error);
  DLManagedTensor* huge = array.hand_out();
  std::vector<int64_t> huge_strides{INT64_MAX / 2};
  std::vector<int64_t> huge_shape{4};
  huge->dl_tensor.shape = huge_shape.data();
  huge->dl_tensor.strides = huge_strides.data();
  CHECK_THROWS_WITH_AS(ts::from_dlpack(huge), doctest::Contains("overflows int64"), ts::Error);
  CHECK(array.deletions == 5);
  CHECK_THROWS_WITH_AS(ts::from_dlpack(nullptr), doctest::Contains("null"), ts::Error);
}
