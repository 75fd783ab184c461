// Oracles for the functional collectives, computed with plain loops over doubles.
//
// Each collective is linear, so it is written down by its definition: a list of terms "output
// element (rank r, index o) receives weight * input element (rank k, index i)". The forward oracle
// applies the terms; the gradient oracle applies them transposed (dL/dx[k, i] = sum of weight *
// c[r, o] over the terms), which is the definition of the gradient of L = sum_r <c_r, y_r> — it
// does not use the backward rules the library implements. Finite differences of L through the
// library's own forward check the gradients a third way.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

namespace oracle {

namespace ts = tessera;

// One rank's shard as plain doubles.
struct Host {
  ts::Shape shape;
  std::vector<double> values;
};
using Shards = std::map<int, Host>;
using Fibres = std::vector<std::vector<int>>;  // global ranks in group-rank order

inline int64_t numel(const ts::Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

inline std::vector<int64_t> unravel(int64_t flat, const ts::Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

inline int64_t ravel(const std::vector<int64_t>& index, const ts::Shape& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

// Distinct values on every rank and element; `salt` keeps inputs and seeds apart.
inline Shards distinct(const std::map<int, ts::Shape>& shapes, double salt) {
  Shards shards;
  for (const auto& [rank, shape] : shapes) {
    Host h{shape, {}};
    for (int64_t e = 0; e < numel(shape); ++e)
      h.values.push_back(salt + 100.0 * rank + 0.5 * static_cast<double>(e) + 0.125);
    shards[rank] = h;
  }
  return shards;
}

// Gradient seeds c_r: distinct per rank and element, of order 1.
inline Shards seeds(const std::map<int, ts::Shape>& shapes) {
  Shards c = distinct(shapes, 0.375);
  for (auto& [rank, h] : c)
    for (double& v : h.values) v = std::fmod(v * 1.618, 7.0) - 3.0;
  return c;
}

inline std::map<int, ts::Shape> same_shape(int world, const ts::Shape& shape) {
  std::map<int, ts::Shape> shapes;
  for (int r = 0; r < world; ++r) shapes[r] = shape;
  return shapes;
}

inline ts::Tensor to_local(const Shards& shards, ts::DType dtype = ts::kFloat64) {
  std::vector<std::pair<int, ts::Tensor>> list;
  for (const auto& [rank, h] : shards) list.emplace_back(rank, ts::from_values(h.values, h.shape, dtype));
  return ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(list)));
}

inline Shards from_local(const ts::Tensor& t) {
  REQUIRE(t.defined());
  REQUIRE(t.is_local());
  Shards shards;
  for (const auto& [rank, shard] : t.shards()) shards[rank] = Host{shard.sizes(), shard.to_vector<double>()};
  return shards;
}

inline std::string shape_text(const ts::Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Equal ranks, shapes, and values within tol * (1 + |want|).
inline void check_close(const Shards& got, const Shards& want, double tol, const std::string& what) {
  INFO(what);
  REQUIRE(got.size() == want.size());
  for (const auto& [shard_rank, w] : want) {
    const auto rank = shard_rank;  // named again: clang 14 cannot capture a structured binding
    INFO("rank " << rank);
    REQUIRE(got.count(rank) == 1);
    const Host& g = got.at(rank);
    REQUIRE(shape_text(g.shape) == shape_text(w.shape));
    for (size_t e = 0; e < w.values.size(); ++e) {
      INFO("element " << e);
      CHECK(std::abs(g.values[e] - w.values[e]) <= tol * (1 + std::abs(w.values[e])));
    }
  }
}

// out[r][o] += weight * in[k][i]
struct Term {
  int out_rank;
  int64_t out_index;
  int in_rank;
  int64_t in_index;
  double weight;
};

struct LinearMap {
  std::map<int, ts::Shape> out_shapes;
  std::vector<Term> terms;

  Shards forward(const Shards& x) const {
    Shards y;
    for (const auto& [rank, shape] : out_shapes)
      y[rank] = Host{shape, std::vector<double>(static_cast<size_t>(numel(shape)), 0.0)};
    for (const Term& t : terms)
      y[t.out_rank].values[static_cast<size_t>(t.out_index)] +=
          t.weight * x.at(t.in_rank).values[static_cast<size_t>(t.in_index)];
    return y;
  }

  // dL/dx for L = sum_r <c_r, y_r>, shaped like x.
  Shards gradient(const Shards& c, const Shards& x) const {
    Shards g;
    for (const auto& [rank, h] : x) g[rank] = Host{h.shape, std::vector<double>(h.values.size(), 0.0)};
    for (const Term& t : terms)
      g[t.in_rank].values[static_cast<size_t>(t.in_index)] +=
          t.weight * c.at(t.out_rank).values[static_cast<size_t>(t.out_index)];
    return g;
  }
};

// y_r = weight * sum over r's fibre of x_k.
inline LinearMap all_reduce(const Shards& x, const Fibres& fibres, double weight) {
  LinearMap m;
  for (const auto& fibre : fibres)
    for (int r : fibre) {
      m.out_shapes[r] = x.at(r).shape;
      for (int64_t e = 0; e < numel(x.at(r).shape); ++e)
        for (int k : fibre) m.terms.push_back({r, e, k, e, weight});
    }
  return m;
}

// y_r = the fibre's x concatenated along dim d in group-rank order.
inline LinearMap all_gather(const Shards& x, const Fibres& fibres, size_t d) {
  LinearMap m;
  for (const auto& fibre : fibres)
    for (int r : fibre) {
      const ts::Shape in_shape = x.at(r).shape;
      ts::Shape out_shape = in_shape;
      out_shape[d] *= static_cast<int64_t>(fibre.size());
      m.out_shapes[r] = out_shape;
      for (int64_t o = 0; o < numel(out_shape); ++o) {
        std::vector<int64_t> index = unravel(o, out_shape);
        const int source = fibre[static_cast<size_t>(index[d] / in_shape[d])];
        index[d] %= in_shape[d];
        m.terms.push_back({r, o, source, ravel(index, in_shape), 1.0});
      }
    }
  return m;
}

// Group rank g's y = weight * sum over the fibre of block g (along dim d) of x_k.
inline LinearMap reduce_scatter(const Shards& x, const Fibres& fibres, size_t d, double weight) {
  LinearMap m;
  for (const auto& fibre : fibres)
    for (size_t g = 0; g < fibre.size(); ++g) {
      const int r = fibre[g];
      const ts::Shape in_shape = x.at(r).shape;
      ts::Shape out_shape = in_shape;
      out_shape[d] /= static_cast<int64_t>(fibre.size());
      m.out_shapes[r] = out_shape;
      for (int64_t o = 0; o < numel(out_shape); ++o) {
        std::vector<int64_t> index = unravel(o, out_shape);
        index[d] += static_cast<int64_t>(g) * out_shape[d];
        for (int k : fibre) m.terms.push_back({r, o, k, ravel(index, in_shape), weight});
      }
    }
  return m;
}

// send[i][j]: rows member i sends member j (group ranks of one fibre over ranks 0..p-1); rows of
// i's input go out in j order, and j's output holds the blocks in i order.
inline LinearMap all_to_all(const Shards& x, const std::vector<std::vector<int64_t>>& send) {
  LinearMap m;
  const size_t p = send.size();
  for (size_t j = 0; j < p; ++j) {
    ts::Shape out_shape = x.at(static_cast<int>(j)).shape;
    const int64_t row = numel(out_shape) / (out_shape[0] == 0 ? 1 : out_shape[0]);
    int64_t rows = 0;
    for (size_t i = 0; i < p; ++i) rows += send[i][j];
    out_shape[0] = rows;
    m.out_shapes[static_cast<int>(j)] = out_shape;
    int64_t out_row = 0;
    for (size_t i = 0; i < p; ++i) {
      int64_t in_row = 0;
      for (size_t jj = 0; jj < j; ++jj) in_row += send[i][jj];
      for (int64_t t = 0; t < send[i][j]; ++t, ++out_row)
        for (int64_t e = 0; e < row; ++e)
          m.terms.push_back(
              {static_cast<int>(j), out_row * row + e, static_cast<int>(i), (in_row + t) * row + e, 1.0});
    }
  }
  return m;
}

// Every member gets the fibre's group rank src's x.
inline LinearMap broadcast(const Shards& x, const Fibres& fibres, size_t src) {
  LinearMap m;
  for (const auto& fibre : fibres)
    for (int r : fibre) {
      m.out_shapes[r] = x.at(fibre[src]).shape;
      for (int64_t e = 0; e < numel(x.at(r).shape); ++e) m.terms.push_back({r, e, fibre[src], e, 1.0});
    }
  return m;
}

inline Fibres whole(int world) {
  std::vector<int> all;
  for (int r = 0; r < world; ++r) all.push_back(r);
  return {all};
}

inline double dot(const Shards& c, const Shards& y) {
  double total = 0;
  for (const auto& [rank, h] : c)
    for (size_t e = 0; e < h.values.size(); ++e) total += h.values[e] * y.at(rank).values[e];
  return total;
}

// Central differences of L(x) = sum_r <c_r, f(x)_r> through the library's forward, element by
// element (exact up to rounding for a linear f; h keeps the rounding small against the slope).
inline Shards finite_differences(const std::function<ts::Tensor(const ts::Tensor&)>& f, const Shards& x,
                                 const Shards& c, double h = 0.25) {
  Shards g;
  for (const auto& [rank, host] : x) {
    g[rank] = Host{host.shape, std::vector<double>(host.values.size(), 0.0)};
    for (size_t e = 0; e < host.values.size(); ++e) {
      Shards plus = x, minus = x;
      plus[rank].values[e] += h;
      minus[rank].values[e] -= h;
      const double up = dot(c, from_local(f(to_local(plus))));
      const double down = dot(c, from_local(f(to_local(minus))));
      g[rank].values[e] = (up - down) / (2 * h);
    }
  }
  return g;
}

// Runs x -> f(x) with x requiring grad, seeds backward with c, and returns (forward, x.grad()).
struct Run {
  Shards y;
  Shards grad;
  std::string grad_fn;
};
inline Run run(const std::function<ts::Tensor(const ts::Tensor&)>& f, const Shards& x, const Shards& c,
               ts::DType dtype = ts::kFloat64) {
  ts::Tensor input = to_local(x, dtype);
  input.set_requires_grad(true);
  ts::Tensor y = f(input);
  REQUIRE(y.requires_grad());
  Run result{from_local(y), {}, y.grad_fn_name()};
  y.backward(to_local(c, dtype));
  REQUIRE(input.grad().defined());
  REQUIRE(input.grad().is_local());
  CHECK(input.grad().dtype() == dtype);
  CHECK(input.grad().ranks() == input.ranks());
  result.grad = from_local(input.grad());
  return result;
}

// Forward, gradient (against the transposed definition) and, when asked, finite differences.
inline void check_op(const std::function<ts::Tensor(const ts::Tensor&)>& f, const LinearMap& m,
                     const Shards& x, const char* grad_fn, bool with_finite_differences = true) {
  const Shards c = seeds(m.out_shapes);
  const Run r = run(f, x, c);
  CHECK(r.grad_fn == grad_fn);
  check_close(r.y, m.forward(x), 1e-12, "forward");
  check_close(r.grad, m.gradient(c, x), 1e-12, "gradient against the definition");
  if (with_finite_differences)
    check_close(finite_differences(f, x, c), m.gradient(c, x), 1e-9, "finite differences");
}

}  // namespace oracle
