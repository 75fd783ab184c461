// Factories: tensors made from nothing but a shape, a value or a generator.
#include <algorithm>
#include "tessera/factories.hpp"

#include <cmath>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "tensor/internal.hpp"
#include "tensor/local_factories.hpp"
#include "tensor/program_generator.hpp"
#include "tessera/detail/spmd_fresh.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

DType dtype_or(const TensorOptions& options, DType fallback) {
  return options.has_dtype ? options.dtype_value : fallback;
}

Tensor filled(const Shape& shape, Scalar value, DType dtype, const TensorOptions& options) {
  Tensor out = detail::empty_on(shape, dtype, detail::backend_for(options));
  out.fill_(value);
  return out;
}

Tensor random(const char* op, const Shape& shape, Generator& generator, const TensorOptions& options,
              uint64_t counters_per_element, std::initializer_list<dispatch::Attr> distribution) {
  const DType dtype = dtype_or(options, kDefaultFloat);
  if (!is_floating(dtype))
    throw Error(
        fmt::format("{}: dtype {} is not supported; expected float32 or float64", op, dtype_name(dtype)));
  Tensor out = detail::empty_on(shape, dtype, detail::backend_for(options));
  const auto numel = static_cast<uint64_t>(out.numel());
  const uint64_t offset = generator.advance(numel * counters_per_element) / counters_per_element;
  const dispatch::Attr seed = dispatch::Attr::integer("seed", static_cast<int64_t>(generator.seed()));
  const dispatch::Attr start = dispatch::Attr::integer("offset", static_cast<int64_t>(offset));
  const auto it = distribution.begin();
  dispatch::call_kernel(op, dtype, {}, {dispatch::operand(*out.impl())}, {seed, start, it[0], it[1]});
  return out;
}

std::mutex default_generator_mutex;

// Ranks may draw in parallel from copies of one generator; it ends at the furthest any rank got,
// whatever order they finish in.
void advance_to_furthest(Generator& generator, const Generator& drawn) {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  if (drawn.offset() > generator.offset()) generator.advance(drawn.offset() - generator.offset());
}

// Runs a factory over the active local mode's ranks when there is one (a local tensor), per rank
// when an argument is local, else once (a plain tensor).
template <class F, class... Args>
Tensor make(const char* op, F&& f, const Args&... args) {
  if (LocalMode* mode = detail::factory_mode()) {
    const RankSet ranks = detail::factory_ranks(*mode);
    return detail::spmd_pure_over(op, ranks, f, args...);  // ranks given the same arguments share one tensor
  }
  return detail::spmd_pure(op, f, args...);
}

}  // namespace

Generator& default_generator() {
  static Generator generator;
  return generator;
}

namespace {
// Set while the thread runs a rank's program (ts::spawn): its random tensors come from there.
thread_local Generator* program_generator = nullptr;
}  // namespace

Generator*& detail::thread_program_generator() { return program_generator; }

Tensor empty(const SymShape& shape, TensorOptions options) {
  return make(
      "empty",
      [&](const SymShape& s) {
        return detail::empty_on(s.to_shape(), dtype_or(options, kFloat32), detail::backend_for(options));
      },
      shape);
}
Tensor zeros(const SymShape& shape, TensorOptions options) {
  return full(shape, 0, options.dtype(dtype_or(options, kFloat32)));
}
Tensor ones(const SymShape& shape, TensorOptions options) {
  return full(shape, 1, options.dtype(dtype_or(options, kFloat32)));
}

Tensor full(const SymShape& shape, Scalar value, TensorOptions options) {
  return make(
      "full",
      [&](const SymShape& s, const Scalar& v) {
        return filled(s.to_shape(), v, dtype_or(options, v.promotion_dtype()), options);
      },
      shape, value);
}

Tensor scalar_tensor(Scalar value, TensorOptions options) { return full(SymShape{}, value, options); }

Tensor arange(Scalar end, TensorOptions options) { return arange(0, end, 1, options); }

namespace {
Tensor dense_arange(const Scalar& start, const Scalar& end, const Scalar& step,
                    const TensorOptions& options) {
  const bool all_integral = start.is_integral() && end.is_integral() && step.is_integral();
  const DType dtype = dtype_or(options, all_integral ? kInt64 : kDefaultFloat);
  if (dtype == kBool) throw Error("arange: dtype bool is not supported; expected a numeric dtype");
  if (step.to_double() == 0.0) throw Error("arange: step must be nonzero, got 0");
  const double span = (end.to_double() - start.to_double()) / step.to_double();
  if (!(span < 9.0e15))
    throw Error(fmt::format("arange: the range [{}, {}) with step {} is too large or not finite",
                            start.to_string(), end.to_string(), step.to_string()));
  // Count as torch.arange does: ceil((end - start) / step), computed exactly for integers.
  int64_t count;
  if (all_integral) {
    // In 128 bits: end - start overflows int64 for bounds of opposite sign near the extremes.
    const __int128 s = step.to_int();
    const __int128 diff = static_cast<__int128>(end.to_int()) - start.to_int();
    const __int128 n = (diff == 0 || (diff > 0) != (s > 0)) ? 0 : (diff - (s > 0 ? 1 : -1)) / s + 1;
    if (n > INT64_MAX)
      throw Error(fmt::format("arange: the range [{}, {}) with step {} has more than {} elements",
                              start.to_string(), end.to_string(), step.to_string(), INT64_MAX));
    count = static_cast<int64_t>(n);
  } else {
    count = std::max<int64_t>(0, static_cast<int64_t>(std::ceil(span)));
  }
  Tensor out = detail::empty_on({count}, dtype, detail::backend_for(options));
  const bool integral = !is_floating(dtype);
  const dispatch::Attr a = integral ? dispatch::Attr::integer("start", start.to_int())
                                    : dispatch::Attr::real("start", start.to_double());
  const dispatch::Attr b = integral ? dispatch::Attr::integer("step", step.to_int())
                                    : dispatch::Attr::real("step", step.to_double());
  dispatch::call_kernel("arange", dtype, {}, {dispatch::operand(*out.impl())}, {a, b});
  return out;
}

Tensor dense_eye(int64_t n, int64_t m, const TensorOptions& options) {
  if (n < 0 || m < 0) throw Error(fmt::format("eye: sizes must be non-negative, got n={} m={}", n, m));
  const DType dtype = dtype_or(options, kFloat32);
  Tensor out = detail::empty_on({n, m}, dtype, detail::backend_for(options));
  dispatch::call_kernel("eye", dtype, {}, {dispatch::operand(*out.impl())});
  return out;
}
}  // namespace

Tensor arange(Scalar start, Scalar end, Scalar step, TensorOptions options) {
  return make(
      "arange",
      [&](const Scalar& a, const Scalar& b, const Scalar& c) { return dense_arange(a, b, c, options); },
      start, end, step);
}

Tensor eye(int64_t n, TensorOptions options) { return eye(n, n, options); }

Tensor eye(int64_t n, int64_t m, TensorOptions options) {
  return make("eye", [&] { return dense_eye(n, m, options); });
}

namespace {

// A distribution: its kernel, how many counters one element consumes, and its parameters.
struct Distribution {
  const char* op;
  const char* kernel;
  uint64_t counters_per_element;
  dispatch::Attr first;
  dispatch::Attr second;
};
const Distribution kUniform{"rand", "uniform", 1, dispatch::Attr::real("low", 0.0),
                            dispatch::Attr::real("high", 1.0)};
// A normal element consumes one counter: Box-Muller pairs two neighbouring counters and gives each
// element of the pair its own output (cosine or sine), see counter_rng.hpp.
const Distribution kNormal{"randn", "normal", 1, dispatch::Attr::real("mean", 0.0),
                           dispatch::Attr::real("std", 1.0)};

// With an explicit generator inside a mode, every rank draws the same numbers (each from a copy of
// the generator's state) and the generator advances once.
Tensor draw(const Distribution& d, const SymShape& shape, Generator& generator,
            const TensorOptions& options) {
  const Generator start = generator;
  return make(
      d.op,
      [&](const SymShape& s) {
        Generator copy = start;
        Tensor t = random(d.kernel, s.to_shape(), copy, options, d.counters_per_element, {d.first, d.second});
        advance_to_furthest(generator, copy);
        return t;
      },
      shape);
}

// Inside a local mode each rank draws from its own generator (see LocalMode); outside, from the
// default generator.
Tensor draw(const Distribution& d, const SymShape& shape, const TensorOptions& options) {
  if (LocalMode* mode = detail::factory_mode()) {
    // Ranks whose generators stand at the same state (the default: one seed everywhere) draw the
    // same numbers: drawn once and shared as replicas, and every generator advances alike.
    const RankSet& ranks = detail::factory_ranks(*mode);
    const Generator& first = detail::factory_generator(*mode, ranks[0]);
    const bool alike = !shape.is_local() && std::all_of(ranks.begin(), ranks.end(), [&](int r) {
      const Generator& g = detail::factory_generator(*mode, r);
      return g.seed() == first.seed() && g.offset() == first.offset();
    });
    if (alike && ranks.size() > 1) {
      Generator common = first;
      Tensor drawn = draw(d, shape, common, options);
      for (int r : ranks) detail::factory_generator(*mode, r) = common;
      return drawn;
    }
    return make(
        d.op,
        [&](const SymShape& s, int64_t rank) {
          return draw(d, s, detail::factory_generator(*mode, static_cast<int>(rank)), options);
        },
        shape, detail::factory_rank());
  }
  if (Generator* own = program_generator) return draw(d, shape, *own, options);
  std::lock_guard lock(default_generator_mutex);
  return draw(d, shape, default_generator(), options);
}

}  // namespace

Tensor rand(const SymShape& shape, TensorOptions options) { return draw(kUniform, shape, options); }
Tensor randn(const SymShape& shape, TensorOptions options) { return draw(kNormal, shape, options); }
Tensor rand(const SymShape& shape, Generator& generator, TensorOptions options) {
  return draw(kUniform, shape, generator, options);
}
Tensor randn(const SymShape& shape, Generator& generator, TensorOptions options) {
  return draw(kNormal, shape, generator, options);
}

void manual_seed(uint64_t seed) { manual_seed(SymInt(static_cast<int64_t>(seed))); }

void manual_seed(const SymInt& seed) {
  if (LocalMode* mode = detail::factory_mode()) return detail::factory_manual_seed(*mode, seed);
  if (Generator* own = program_generator) return own->manual_seed(static_cast<uint64_t>(seed.as_int()));
  std::lock_guard lock(default_generator_mutex);
  default_generator().manual_seed(static_cast<uint64_t>(seed.as_int()));
}

namespace {
// The uninitialised tensor *_like makes for one rank's dense `like`: its sizes, and its dtype and
// backend unless the options name others. The backend is the handle `like` holds, not looked up again.
Tensor empty_for_like(const char* op, const Tensor& like, const TensorOptions& options) {
  const TensorImpl& impl = detail::impl_of(like, op);
  const DType dtype = options.has_dtype ? options.dtype_value : impl.dtype();
  if (options.backend_name.empty()) return detail::empty_like_on(impl, impl.sizes(), dtype);
  return detail::empty_on(impl.sizes(), dtype, detail::backend_for(options));
}
}  // namespace

// *_like follow their argument: local when it is local, plain otherwise (even inside a mode).
Tensor empty_like(const Tensor& like, TensorOptions options) {
  return detail::spmd_fresh(
      "empty_like", [&](const Tensor& t) { return empty_for_like("empty_like", t, options); }, like);
}
Tensor zeros_like(const Tensor& like, TensorOptions options) { return full_like(like, 0, options); }
Tensor ones_like(const Tensor& like, TensorOptions options) { return full_like(like, 1, options); }
Tensor full_like(const Tensor& like, Scalar value, TensorOptions options) {
  return detail::spmd_fresh(
      "full_like",
      [&](const Tensor& t, const Scalar& v) {
        Tensor out = empty_for_like("full_like", t, options);
        out.fill_(v);
        return out;
      },
      like, value);
}

namespace detail {
void throw_ragged(size_t row, size_t got, size_t expected) {
  throw Error(fmt::format("tensor: nested values are ragged: row {} has {} elements, expected {}", row, got,
                          expected));
}
}  // namespace detail

namespace {
template <class T>
Tensor dense_from_values(const std::vector<T>& values, const Shape& shape, const TensorOptions& options) {
  if (shape_numel(shape) != static_cast<int64_t>(values.size()))
    throw Error(fmt::format("from_values: {} values do not fill shape {} ({} elements)", values.size(),
                            shape_text(shape), shape_numel(shape)));
  // Python semantics: plain integers become int64.
  using Stored = std::conditional_t<std::is_same_v<T, bool>, uint8_t,
                                    std::conditional_t<std::is_integral_v<T>, int64_t, T>>;
  DType natural = kInt64;
  if constexpr (std::is_same_v<T, bool>)
    natural = kBool;
  else if constexpr (std::is_floating_point_v<T>)
    natural = dtype_of<T>();
  std::vector<Stored> host(values.begin(), values.end());
  Tensor staged = detail::empty_on(shape, natural, detail::backend_for(options));
  const TensorImpl& impl = *staged.impl();
  impl.backend().copy(impl.storage()->data, host.data(), host.size() * sizeof(Stored),
                      TESSERA_COPY_HOST_TO_DEVICE);
  return staged.to(dtype_or(options, natural));
}
}  // namespace

template <class T>
Tensor from_values(const std::vector<T>& values, const Shape& shape, TensorOptions options) {
  return make("tensor", [&] { return dense_from_values(values, shape, options); });
}

template Tensor from_values<bool>(const std::vector<bool>&, const Shape&, TensorOptions);
template Tensor from_values<int>(const std::vector<int>&, const Shape&, TensorOptions);
template Tensor from_values<long>(const std::vector<long>&, const Shape&, TensorOptions);
template Tensor from_values<long long>(const std::vector<long long>&, const Shape&, TensorOptions);
template Tensor from_values<float>(const std::vector<float>&, const Shape&, TensorOptions);
template Tensor from_values<double>(const std::vector<double>&, const Shape&, TensorOptions);

}  // namespace tessera
