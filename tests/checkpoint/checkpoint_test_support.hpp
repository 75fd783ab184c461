// Helpers for the checkpoint tests: scratch directories, tensors of distinct values, and an
// element-by-element comparison with a dense oracle.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace ct {

namespace ts = tessera;
namespace dcp = tessera::dcp;

// A fresh directory under the system's temporary directory, removed with the object.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tessera-dcp-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A plain tensor whose elements all differ: element i holds salt + i * 0.5 (salt + i for integer
// dtypes; exact in float32 for the sizes used here), so a misplaced element changes the value.
inline ts::Tensor distinct(const ts::Shape& shape, double salt = 0, ts::DType dtype = ts::kFloat32) {
  const ts::DisabledLocalMode plain = ts::maybe_disable_local_mode();
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> values(static_cast<size_t>(n));
  const double step = ts::is_floating(dtype) ? 0.5 : 1.0;
  for (int64_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = salt + step * static_cast<double>(i);
  return ts::from_values(values, shape).to(dtype);
}

inline std::vector<double> values_of(const ts::Tensor& t) {
  const ts::DisabledLocalMode plain = ts::maybe_disable_local_mode();
  return t.contiguous().to(ts::kFloat64).to_vector<double>();
}

inline void check_equal(const ts::Tensor& got, const ts::Tensor& want, const std::string& what) {
  REQUIRE_MESSAGE(got.sizes() == want.sizes(), what);
  const auto g = values_of(got), w = values_of(want);
  for (size_t i = 0; i < g.size(); ++i)
    if (g[i] != w[i]) {
      FAIL_CHECK(what << ": element " << i << " is " << g[i] << ", expected " << w[i]);
      return;
    }
}

// The dense value of a DTensor, assembled by the library's own redistribution (not by the
// checkpoint code under test).
inline ts::Tensor dense_of(const ts::DTensor& dt) { return dt.full_tensor().reconcile(); }

// Rank r's expected shard of `dense` for (mesh, placements): the library's distribute_tensor.
inline ts::DTensor zeros_like_layout(const ts::Shape& shape, const ts::DeviceMesh& mesh,
                                     const ts::Placements& p, ts::DType dtype = ts::kFloat32) {
  ts::Tensor zeros;
  {
    const ts::DisabledLocalMode plain = ts::maybe_disable_local_mode();
    zeros = ts::zeros(shape, dtype);
  }
  return ts::distribute_tensor(zeros, mesh, p);
}

// Bytes of every hosted rank's shard of `dt`.
inline int64_t shard_bytes(const ts::DTensor& dt) {
  int64_t n = 0;
  for (const auto& [rank, shard] : dt.to_local().shards())
    n += shard.numel() * static_cast<int64_t>(ts::itemsize(shard.dtype()));
  return n;
}

}  // namespace ct
