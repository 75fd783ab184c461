// reconcile(): collapse a local tensor whose shards are all equal into one dense tensor, or say
// precisely where they differ.
#include <cstring>

#include <fmt/format.h>

#include "ranks/local_tensor_impl.hpp"
#include "tensor/internal.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

std::string index_text(int64_t flat, const Shape& sizes) {
  std::vector<int64_t> index(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    index[d] = sizes[d] == 0 ? 0 : flat % sizes[d];
    flat = sizes[d] == 0 ? 0 : flat / sizes[d];
  }
  return shape_text(index);
}

template <class T>
std::string value_text(T v) {
  if constexpr (std::is_same_v<T, bool>) return v ? "True" : "False";
  else return fmt::format("{}", v);
}

// The first element where `shard` differs bitwise from `reference`, or -1.
template <class T>
int64_t first_difference(const std::vector<T>& reference, const std::vector<T>& shard) {
  for (size_t i = 0; i < reference.size(); ++i) {
    const T a = reference[i];
    const T b = shard[i];
    if (std::memcmp(&a, &b, sizeof(T)) != 0) return static_cast<int64_t>(i);
  }
  return -1;
}

template <class T>
std::string differences(const LocalTensorImpl& local) {
  const auto& [first_rank, first_shard] = *local.shards().begin();
  const std::vector<T> reference = detail::read_values<T>(*first_shard.impl());
  std::string report;
  for (const auto& [rank, shard] : local.shards()) {
    if (rank == first_rank) continue;
    if (shard.sizes() != first_shard.sizes()) {
      report += fmt::format("\n  rank {} has shape {} but rank {} has shape {}", rank, shape_text(shard.sizes()),
                            first_rank, shape_text(first_shard.sizes()));
      continue;
    }
    const std::vector<T> values = detail::read_values<T>(*shard.impl());
    const int64_t at = first_difference(reference, values);
    if (at >= 0)
      report += fmt::format("\n  rank {} differs from rank {} first at index {}: {} vs {}", rank, first_rank,
                            index_text(at, first_shard.sizes()), value_text<T>(values[static_cast<size_t>(at)]),
                            value_text<T>(reference[static_cast<size_t>(at)]));
  }
  return report;
}

}  // namespace

Tensor Tensor::reconcile() const {
  const LocalTensorImpl& local = checked_local("reconcile");
  std::string report;
  switch (local.dtype()) {
    case DType::Bool: report = differences<bool>(local); break;
    case DType::Int32: report = differences<int32_t>(local); break;
    case DType::Int64: report = differences<int64_t>(local); break;
    case DType::Float32: report = differences<float>(local); break;
    case DType::Float64: report = differences<double>(local); break;
  }
  if (!report.empty())
    throw Error(fmt::format("reconcile: the shards of ranks {} are not all equal:{}", local.ranks().to_string(), report));
  return local.first().clone();
}

}  // namespace tessera
