// Local mode and per-rank functions (PyTorch: LocalTensor, rank_map, tensor_map): ts.local_tensor,
// ts.rank_map, ts.tensor_map and ts.current_rank. bind_local is the one entry point of local mode:
// it also binds the scopes (local_scopes.cpp: ts.LocalMode, ts.maybe_disable_local_mode, ...) and
// ts.run_per_rank (run_per_rank.cpp). Python callbacks run per rank through rank_callback.hpp.
#include <nanobind/stl/map.h>

#include <map>
#include <utility>

#include "bindings.hpp"
#include "local_scopes.hpp"
#include "rank_callback.hpp"
#include "run_per_rank.hpp"

namespace tessera::python {

void bind_local(nb::module_& m) {
  bind_local_scopes(m);

  m.def(
      "current_rank", [] { return to_python(current_rank()); },
      "This process's rank: inside a mode a ts.LocalInt {r: r}; outside, the world rank (0 in simulation).");

  m.def(
      "local_tensor",
      [](const std::map<int, Tensor>& shards) {
        return without_gil([&] { return local_tensor(RankMap<Tensor>(shards)); });
      },
      nb::arg("shards"), "A local tensor from per-rank dense tensors: ts.local_tensor({0: a, 1: b}).");

  m.def(
      "rank_map",
      [](nb::callable fn) {
        Callback callback(std::move(fn), "ts.rank_map");
        return callback.run([&] {
          return rank_map([&](int rank) {
            return callback.call(
                rank, [&](nb::callable& f) { return tensor_result(f(rank), "ts.rank_map", rank, false); });
          });
        });
      },
      nb::arg("fn"),
      "Inside a mode: a local tensor whose shard r is fn(r), computed with the mode disabled. "
      "Outside: fn(current rank) as a plain tensor.");

  m.def(
      "tensor_map",
      [](const Tensor& tensor, nb::callable fn) {
        Callback callback(std::move(fn), "ts.tensor_map");
        return callback.run([&] {
          return tensor_map(tensor, [&](int rank, const Tensor& shard) {
            return callback.call(rank, [&](nb::callable& f) {
              return tensor_result(f(rank, shard), "ts.tensor_map", rank, true);
            });
          });
        });
      },
      nb::arg("tensor"), nb::arg("fn"),
      "Shard r becomes fn(r, shard r); a rank for which fn returns None is dropped. "
      "For a plain tensor: fn(current rank, tensor).");

  bind_run_per_rank(m);
}

}  // namespace tessera::python
