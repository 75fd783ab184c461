// reconcile(): collapse a local tensor whose shards are all equal into one dense tensor, or say
// precisely where they differ.
#include <cstring>

#include <fmt/format.h>

#include "tensor/internal.hpp"
#include "tensor/local_tensor_impl.hpp"
#include "tessera/errors.hpp"
#include "world/process_link.hpp"
#include "world/world.hpp"

#include <fmt/ranges.h>

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
  if constexpr (std::is_same_v<T, bool>)
    return v ? "True" : "False";
  else
    return fmt::format("{}", v);
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
  const std::vector<T> reference = detail::read_values<T>(*first_shard.impl(), "reconcile");
  std::string report;
  for (const auto& [rank, shard] : local.shards()) {
    if (rank == first_rank) continue;
    if (shard.sizes() != first_shard.sizes()) {
      report += fmt::format("\n  rank {} has shape {} but rank {} has shape {}", rank,
                            shape_text(shard.sizes()), first_rank, shape_text(first_shard.sizes()));
      continue;
    }
    const std::vector<T> values = detail::read_values<T>(*shard.impl(), "reconcile");
    const int64_t at = first_difference(reference, values);
    if (at >= 0)
      report +=
          fmt::format("\n  rank {} differs from rank {} first at index {}: {} vs {}", rank, first_rank,
                      index_text(at, first_shard.sizes()), value_text<T>(values[static_cast<size_t>(at)]),
                      value_text<T>(reference[static_cast<size_t>(at)]));
  }
  return report;
}

// Under a transport the other processes hold the other ranks: every process shows a digest of its
// value (dtype, shape, bytes) and all must match.
void agree_across_processes(const Tensor& value) {
  world::WorldState& w = world::current();
  const std::string text = fmt::format("{} {}", dtype_name(value.dtype()), shape_text(value.sizes()));
  const TensorImpl& impl = *value.impl();  // a fresh clone: contiguous from its offset
  const std::byte* bytes = impl.bytes_at();
  const uint64_t value_digest =
      world::digest(bytes, static_cast<size_t>(impl.numel()) * itemsize(impl.dtype()), world::digest(text));
  std::string mine = fmt::format("{:016x} {}", value_digest, text);
  mine.resize(128, ' ');
  const std::vector<std::string> all =
      w.link()->allgather(mine, "reconcile: comparing the processes' values");
  for (size_t p = 0; p < all.size(); ++p)
    if (all[p] != mine)
      throw Error(
          fmt::format("reconcile: the shards on this process (ranks {}) agree, but process {} holds another "
                      "value (digest {} vs {} here)",
                      fmt::join(w.hosted_ranks(), ","), p, all[p].substr(0, all[p].find_last_not_of(' ') + 1),
                      mine.substr(0, mine.find_last_not_of(' ') + 1)));
}

}  // namespace

Tensor Tensor::reconcile() const {
  const LocalTensorImpl& local = checked_local("reconcile");
  std::string report;
  switch (local.dtype()) {
    case DType::Bool:
      report = differences<bool>(local);
      break;
    case DType::Int32:
      report = differences<int32_t>(local);
      break;
    case DType::Int64:
      report = differences<int64_t>(local);
      break;
    case DType::Float32:
      report = differences<float>(local);
      break;
    case DType::Float64:
      report = differences<double>(local);
      break;
    // Read as a wider type that holds every value exactly.
    case DType::BFloat16:
    case DType::Float16:
      report = differences<float>(local);
      break;
    case DType::Int8:
    case DType::UInt8:
      report = differences<int32_t>(local);
      break;
  }
  if (!report.empty())
    throw Error(fmt::format("reconcile: the shards of ranks {} are not all equal:{}",
                            local.ranks().to_string(), report));
  Tensor value = local.first().clone();
  if (world::current().distributed()) agree_across_processes(value);
  return value;
}

}  // namespace tessera
