// A seeded property test of the view ops: random chains of views over small tensors, each step
// checked element by element against an index oracle written here. The oracle never looks at
// Tessera's strides: it keeps, for every element of the current view (in row-major order), the
// value it must hold and the storage element it must live in, and moves them with plain index
// arithmetic (narrow adds the start to one index, flip mirrors it, expand pins it to 0, ...).
// Arguments out of range are generated on purpose and must be a tessera::Error.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace ts = tessera;

namespace {

using Index = std::vector<int64_t>;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr size_t kMaxModelDims = 7;  // keeps expand and unsqueeze chains small

int64_t count_of(const Index& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

std::string text_of(const Index& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}

// Steps `idx` to the next multi-index of `shape` in row-major order.
void advance(Index& idx, const Index& shape) {
  for (size_t d = shape.size(); d-- > 0;) {
    if (++idx[d] < shape[d]) return;
    idx[d] = 0;
  }
}

// What a view must be, element by element in row-major order of `shape`.
struct Model {
  Index shape;
  std::vector<int64_t> value;  // the element's value: its flat index in the base arange
  std::vector<int64_t> where;  // the storage element it lives in
  bool own_storage = false;    // a reshape had to copy: `where` no longer points into the base
};

// The model of shape `out` whose element at multi-index i is `in`'s element at source(i).
template <class Source>
Model remap(const Model& in, const Index& out, Source source) {
  Model m{out, {}, {}, in.own_storage};
  const int64_t n = count_of(out);
  Index idx(out.size(), 0);
  for (int64_t e = 0; e < n; ++e, advance(idx, out)) {
    const Index from = source(idx);
    int64_t flat = 0;
    for (size_t d = 0; d < in.shape.size(); ++d) flat = flat * in.shape[d] + from[d];
    m.value.push_back(in.value[static_cast<size_t>(flat)]);
    m.where.push_back(in.where[static_cast<size_t>(flat)]);
  }
  return m;
}

// Whether some strides and offset address exactly the elements of `where` (row-major over `shape`):
// the condition for view() to succeed without a copy.
bool addressable(const std::vector<int64_t>& where, const Index& shape) {
  const int64_t n = count_of(shape);
  if (n == 0) return true;
  Index stride(shape.size(), 0);
  int64_t unit = 1;  // the row-major flat index of one step along dim d
  for (size_t d = shape.size(); d-- > 0; unit *= shape[d])
    if (shape[d] > 1) stride[d] = where[static_cast<size_t>(unit)] - where[0];
  Index idx(shape.size(), 0);
  for (int64_t e = 0; e < n; ++e, advance(idx, shape)) {
    int64_t expected = where[0];
    for (size_t d = 0; d < shape.size(); ++d) expected += idx[d] * stride[d];
    if (where[static_cast<size_t>(e)] != expected) return false;
  }
  return true;
}

bool consecutive(const std::vector<int64_t>& where) {
  for (size_t i = 1; i < where.size(); ++i)
    if (where[i] != where[0] + static_cast<int64_t>(i)) return false;
  return true;
}

// Portable across standard libraries (unlike std::uniform_int_distribution): the same cases everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  int64_t in(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(engine_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool percent(int p) { return in(0, 99) < p; }
  template <class T>
  T pick(const std::vector<T>& options) {
    return options[static_cast<size_t>(in(0, static_cast<int64_t>(options.size()) - 1))];
  }

 private:
  std::mt19937_64 engine_;
};

// A dim argument for a tensor of `n` dims (a 0-d tensor takes 0 and -1): mostly valid, in either
// sign, sometimes just out of range or far out.
int64_t dim_arg(Rng& rng, int64_t n) {
  if (rng.percent(12))
    return rng.pick<int64_t>({std::max<int64_t>(n, 1), -std::max<int64_t>(n, 1) - 1, kMax, kMin});
  const int64_t d = rng.in(0, std::max<int64_t>(n, 1) - 1);
  return rng.percent(30) ? d - std::max<int64_t>(n, 1) : d;
}

// The oracle's normalisation of a dim argument; nullopt when it is out of range.
std::optional<size_t> wrap(int64_t d, int64_t n) {
  const int64_t lo = n == 0 ? -1 : -n, hi = n == 0 ? 0 : n - 1;
  if (d < lo || d > hi) return std::nullopt;
  return static_cast<size_t>(d < 0 ? d + std::max<int64_t>(n, 1) : d);
}

// One op of a chain: what it is, how to run it, and its expected result (nullopt: must throw).
struct Step {
  std::string text;
  std::function<ts::Tensor(const ts::Tensor&)> run;
  std::optional<Model> expected;
};

Step narrow_step(Rng& rng, const Model& m) {
  const int64_t n = static_cast<int64_t>(m.shape.size());
  const int64_t dim = dim_arg(rng, n);
  const auto d = wrap(dim, n);
  const int64_t size = d && n > 0 ? m.shape[*d] : 3;
  const int64_t start = rng.percent(5) ? rng.pick<int64_t>({kMax, kMin}) : rng.in(-size - 2, size + 2);
  const int64_t length = rng.percent(5) ? kMax : rng.in(-1, size + 1);
  Step s{"narrow(" + std::to_string(dim) + ", " + std::to_string(start) + ", " + std::to_string(length) + ")",
         [=](const ts::Tensor& t) { return t.narrow(dim, start, length); }, std::nullopt};
  const int64_t first = start < 0 ? start + size : start;
  if (n > 0 && d && first >= 0 && first <= size && length >= 0 && length <= size - first) {
    Index out = m.shape;
    out[*d] = length;
    s.expected = remap(m, out, [&](Index i) {
      i[*d] += first;
      return i;
    });
  }
  return s;
}

Step slice_step(Rng& rng, const Model& m) {
  const int64_t n = static_cast<int64_t>(m.shape.size());
  const int64_t dim = dim_arg(rng, n);
  const auto d = wrap(dim, n);
  const int64_t size = d && n > 0 ? m.shape[*d] : 3;
  auto bound = [&] { return rng.percent(8) ? rng.pick<int64_t>({kMax, kMin}) : rng.in(-size - 3, size + 3); };
  const int64_t start = bound(), end = bound();
  const int64_t step = rng.pick<int64_t>({1, 1, 1, 2, 2, 3, 4, 7, kMax, 0, -1});
  Step s{"slice(" + std::to_string(dim) + ", " + std::to_string(start) + ", " + std::to_string(end) + ", " +
             std::to_string(step) + ")",
         [=](const ts::Tensor& t) { return t.slice(dim, start, end, step); }, std::nullopt};
  if (n > 0 && d && step > 0) {
    // Python's rules: a negative bound counts from the end, then both clamp to [0, size].
    auto clamp = [&](int64_t b) { return b < -size ? 0 : b < 0 ? b + size : std::min(b, size); };
    const int64_t lo = clamp(start), hi = clamp(end);
    Index taken;  // the indices range(lo, hi, step) visits
    for (int64_t i = lo; i < hi; i = step >= hi - i ? hi : i + step) taken.push_back(i);
    Index out = m.shape;
    out[*d] = static_cast<int64_t>(taken.size());
    s.expected = remap(m, out, [&](Index i) {
      i[*d] = taken[static_cast<size_t>(i[*d])];
      return i;
    });
  }
  return s;
}

Step select_step(Rng& rng, const Model& m) {
  const int64_t n = static_cast<int64_t>(m.shape.size());
  const int64_t dim = dim_arg(rng, n);
  const auto d = wrap(dim, n);
  const int64_t size = d && n > 0 ? m.shape[*d] : 3;
  const int64_t index = rng.percent(5) ? rng.pick<int64_t>({kMax, kMin}) : rng.in(-size - 1, size);
  Step s{"select(" + std::to_string(dim) + ", " + std::to_string(index) + ")",
         [=](const ts::Tensor& t) { return t.select(dim, index); }, std::nullopt};
  if (n > 0 && d && index >= -size && index < size) {
    Index out = m.shape;
    out.erase(out.begin() + static_cast<int64_t>(*d));
    const int64_t at = index < 0 ? index + size : index;
    s.expected = remap(m, out, [&](Index i) {
      i.insert(i.begin() + static_cast<int64_t>(*d), at);
      return i;
    });
  }
  return s;
}

Step transpose_step(Rng& rng, const Model& m) {
  const int64_t n = static_cast<int64_t>(m.shape.size());
  const int64_t a = dim_arg(rng, n), b = dim_arg(rng, n);
  Step s{"transpose(" + std::to_string(a) + ", " + std::to_string(b) + ")",
         [=](const ts::Tensor& t) { return t.transpose(a, b); }, std::nullopt};
  const auto da = wrap(a, n), db = wrap(b, n);
  if (da && db) {
    if (n == 0) {
      s.expected = m;
    } else {
      Index out = m.shape;
      std::swap(out[*da], out[*db]);
      s.expected = remap(m, out, [&](Index i) {
        std::swap(i[*da], i[*db]);
        return i;
      });
    }
  }
  return s;
}

Step permute_step(Rng& rng, const Model& m) {
  const int64_t n = static_cast<int64_t>(m.shape.size());
  Index dims(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) dims[static_cast<size_t>(i)] = i;
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(dims[static_cast<size_t>(i)], dims[static_cast<size_t>(rng.in(0, i))]);
  for (int64_t& d : dims)
    if (rng.percent(25)) d -= n;
  if (rng.percent(15)) {
    const int64_t how = rng.in(0, 2);
    if (how == 0 && n >= 2)
      dims[0] = dims[1];
    else if (how == 1 && n >= 1)
      dims[static_cast<size_t>(rng.in(0, n - 1))] = rng.pick<int64_t>({n, -n - 1, kMin});
    else
      dims.push_back(0);
  }
  Step s{"permute(" + text_of(dims) + ")", [=](const ts::Tensor& t) { return t.permute(dims); },
         std::nullopt};
  if (static_cast<int64_t>(dims.size()) != n) return s;
  std::vector<size_t> perm;
  for (int64_t d : dims) {
    const auto w = wrap(d, n);
    if (!w || std::find(perm.begin(), perm.end(), *w) != perm.end()) return s;
    perm.push_back(*w);
  }
  Index out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[i] = m.shape[perm[i]];
  s.expected = remap(m, out, [&](const Index& i) {
    Index from(i.size());
    for (size_t k = 0; k < perm.size(); ++k) from[perm[k]] = i[k];
    return from;
  });
  return s;
}

Step flip_step(Rng& rng, const Model& m) {
  const int64_t n = static_cast<int64_t>(m.shape.size());
  Index dims;
  for (int64_t d = 0; d < std::max<int64_t>(n, 1); ++d)
    if (rng.percent(50)) dims.push_back(rng.percent(30) ? d - std::max<int64_t>(n, 1) : d);
  std::reverse(dims.begin(), dims.end());
  if (rng.percent(12)) dims.push_back(dims.empty() || rng.percent(50) ? dim_arg(rng, n) : dims.front());
  Step s{"flip(" + text_of(dims) + ")", [=](const ts::Tensor& t) { return t.flip(dims); }, std::nullopt};
  std::vector<size_t> flipped;
  for (int64_t d : dims) {
    const auto w = wrap(d, n);
    if (!w || std::find(flipped.begin(), flipped.end(), *w) != flipped.end()) return s;
    flipped.push_back(*w);
  }
  if (n == 0) {
    s.expected = m;
    return s;
  }
  s.expected = remap(m, m.shape, [&](Index i) {
    for (size_t d : flipped) i[d] = m.shape[d] - 1 - i[d];
    return i;
  });
  return s;
}

Step expand_step(Rng& rng, const Model& m) {
  const size_t n = m.shape.size();
  const size_t lead = n + 2 <= kMaxModelDims ? static_cast<size_t>(rng.in(0, 2)) : 0;
  Index target;
  for (size_t i = 0; i < lead; ++i) target.push_back(rng.percent(5) ? -1 : rng.in(0, 3));
  for (size_t d = 0; d < n; ++d) {
    const int64_t own = m.shape[d];
    if (rng.percent(8))
      target.push_back(rng.pick<int64_t>({own + 1, -2, kMin}));
    else if (own == 1)
      target.push_back(rng.pick<int64_t>({-1, 0, 1, 2, 3}));
    else
      target.push_back(rng.percent(30) ? -1 : own);
  }
  if (rng.percent(3) && target.size() > lead)
    target.erase(target.begin() + static_cast<int64_t>(lead));  // too few dims
  Step s{"expand(" + text_of(target) + ")", [=](const ts::Tensor& t) { return t.expand(target); },
         std::nullopt};
  if (target.size() < n) return s;
  const size_t lead_dims = target.size() - n;
  Index out = target;
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t own = i < lead_dims ? 1 : m.shape[i - lead_dims];
    if (out[i] == -1 && i >= lead_dims) out[i] = own;
    if (out[i] < 0 || (own != 1 && own != out[i])) return s;
  }
  if (count_of(out) > 4096) return flip_step(rng, m);  // keeps chains of expands small
  s.expected = remap(m, out, [&](const Index& i) {
    Index from(n);
    for (size_t d = 0; d < n; ++d) from[d] = m.shape[d] == 1 ? 0 : i[lead_dims + d];
    return from;
  });
  return s;
}

Step unsqueeze_step(Rng& rng, const Model& m) {
  const int64_t n = static_cast<int64_t>(m.shape.size());
  const int64_t dim = rng.percent(10) ? rng.pick<int64_t>({n + 1, -n - 2, kMax, kMin}) : rng.in(-n - 1, n);
  Step s{"unsqueeze(" + std::to_string(dim) + ")", [=](const ts::Tensor& t) { return t.unsqueeze(dim); },
         std::nullopt};
  if (dim < -n - 1 || dim > n) return s;
  const auto at = static_cast<int64_t>(dim < 0 ? dim + n + 1 : dim);
  Index out = m.shape;
  out.insert(out.begin() + at, 1);
  s.expected = remap(m, out, [&](Index i) {
    i.erase(i.begin() + at);
    return i;
  });
  return s;
}

Step squeeze_step(Rng& rng, const Model& m) {
  const int64_t n = static_cast<int64_t>(m.shape.size());
  if (rng.percent(40)) {
    Step s{"squeeze()", [](const ts::Tensor& t) { return t.squeeze(); }, std::nullopt};
    Index out;
    for (int64_t size : m.shape)
      if (size != 1) out.push_back(size);
    s.expected = remap(m, out, [&](const Index& i) {
      Index from;
      size_t k = 0;
      for (int64_t size : m.shape) from.push_back(size == 1 ? 0 : i[k++]);
      return from;
    });
    return s;
  }
  const int64_t dim = dim_arg(rng, n);
  Step s{"squeeze(" + std::to_string(dim) + ")", [=](const ts::Tensor& t) { return t.squeeze(dim); },
         std::nullopt};
  const auto d = wrap(dim, n);
  if (!d) return s;
  if (n == 0 || m.shape[*d] != 1) {
    s.expected = m;  // squeezing a dim that is not 1 leaves the tensor as it is
    return s;
  }
  Index out = m.shape;
  out.erase(out.begin() + static_cast<int64_t>(*d));
  s.expected = remap(m, out, [&](Index i) {
    i.insert(i.begin() + static_cast<int64_t>(*d), 0);
    return i;
  });
  return s;
}

// The model after reinterpreting `m`'s elements (same row-major order) as `shape`: in place when
// strides can address them, otherwise (reshape only) in a fresh contiguous copy.
Model reinterpret(const Model& m, const Index& shape) {
  Model out{shape, m.value, m.where, m.own_storage};
  if (!addressable(m.where, shape)) {
    for (size_t i = 0; i < out.where.size(); ++i) out.where[i] = static_cast<int64_t>(i);
    out.own_storage = true;
  }
  return out;
}

// A random shape of `numel` elements: factors of numel with 1s among them (with a 0 when numel is 0).
Index random_shape(Rng& rng, int64_t numel) {
  Index shape;
  if (numel == 0) {
    const int64_t dims = rng.in(1, 3);
    for (int64_t i = 0; i < dims; ++i) shape.push_back(rng.in(0, 3));
    shape[static_cast<size_t>(rng.in(0, dims - 1))] = 0;
    return shape;
  }
  int64_t left = numel;
  while (left > 1 && shape.size() < 4) {
    Index divisors;
    for (int64_t f = 2; f <= left; ++f)
      if (left % f == 0) divisors.push_back(f);
    const int64_t f = rng.percent(30) ? left : rng.pick(divisors);
    shape.push_back(f);
    left /= f;
  }
  if (left > 1) shape.push_back(left);
  while (shape.size() < 5 && rng.percent(25))
    shape.insert(shape.begin() + rng.in(0, static_cast<int64_t>(shape.size())), 1);
  return shape;
}

Step reshape_step(Rng& rng, const Model& m, bool view) {
  const int64_t numel = count_of(m.shape);
  Index shape = random_shape(rng, numel);
  if (!shape.empty() && rng.percent(30))
    shape[static_cast<size_t>(rng.in(0, static_cast<int64_t>(shape.size()) - 1))] = -1;
  if (rng.percent(12)) {
    const int64_t how = rng.in(0, 3);
    // Twice the elements (or, when empty, a 0 that makes a -1 ambiguous), two -1s, a negative size,
    // a size that overflows the element count.
    if (how == 0)
      shape.push_back(numel == 0 ? 0 : 2);
    else if (how == 1)
      shape.insert(shape.begin(), -1), shape.push_back(-1);
    else if (how == 2)
      shape.push_back(-2);
    else
      shape.push_back(numel == 0 ? -3 : kMax);
  }
  const char* name = view ? "view" : "reshape";
  Step s{std::string(name) + "(" + text_of(shape) + ")",
         [=](const ts::Tensor& t) { return view ? t.view(shape) : t.reshape(shape); }, std::nullopt};
  // The oracle's -1 inference, with every product in 128 bits so it cannot wrap.
  int infer = -1;
  __int128 known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) return s;
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      return s;
    } else {
      known *= shape[i];
      if (known > kMax) return s;
    }
  }
  Index out = shape;
  if (infer >= 0) {
    if (known == 0 || numel % static_cast<int64_t>(known) != 0) return s;
    out[static_cast<size_t>(infer)] = numel / static_cast<int64_t>(known);
  } else if (known != numel) {
    return s;
  }
  if (view && !addressable(m.where, out)) return s;  // view never copies
  s.expected = reinterpret(m, out);
  return s;
}

Step flatten_step(Rng& rng, const Model& m) {
  const int64_t n = static_cast<int64_t>(m.shape.size());
  const int64_t start = dim_arg(rng, n), end = rng.percent(20) ? -1 : dim_arg(rng, n);
  Step s{"flatten(" + std::to_string(start) + ", " + std::to_string(end) + ")",
         [=](const ts::Tensor& t) { return t.flatten(start, end); }, std::nullopt};
  const auto a = wrap(start, n), b = wrap(end, n);
  if (!a || !b || *a > *b) return s;
  if (n == 0) {
    s.expected = reinterpret(m, {1});
    return s;
  }
  Index out(m.shape.begin(), m.shape.begin() + static_cast<int64_t>(*a));
  out.push_back(count_of(
      Index(m.shape.begin() + static_cast<int64_t>(*a), m.shape.begin() + static_cast<int64_t>(*b) + 1)));
  out.insert(out.end(), m.shape.begin() + static_cast<int64_t>(*b) + 1, m.shape.end());
  s.expected = reinterpret(m, out);
  return s;
}

// chunk / split return pieces along one dim; the step keeps piece `k` (chosen from the oracle's
// count of pieces, and the count returned is checked against it).
Step piece_step(Rng& rng, const Model& m) {
  const int64_t n = static_cast<int64_t>(m.shape.size());
  const int64_t dim = dim_arg(rng, n);
  const auto d = wrap(dim, n);
  const int64_t size = d && n > 0 ? m.shape[*d] : 3;
  const int64_t kind = rng.in(0, 2);
  Index lengths;  // the oracle's pieces, when the call is valid
  bool valid = n > 0 && d.has_value();
  std::string text;
  std::function<std::vector<ts::Tensor>(const ts::Tensor&)> parts;
  if (kind == 0) {
    const int64_t chunks = rng.pick<int64_t>({1, 2, 3, 4, 7, 0, -1});
    text = "chunk(" + std::to_string(chunks) + ", " + std::to_string(dim) + ")";
    parts = [=](const ts::Tensor& t) { return ts::chunk(t, chunks, dim); };
    valid = valid && chunks > 0;
    // torch.chunk: pieces of ceil(size / chunks) until the dim runs out; one empty piece for size 0.
    const int64_t piece = chunks > 0 ? std::max<int64_t>(1, (size + chunks - 1) / chunks) : 1;
    for (int64_t at = 0; at < size; at += piece) lengths.push_back(std::min(piece, size - at));
  } else if (kind == 1) {
    const int64_t split_size = rng.pick<int64_t>({1, 2, 3, 6, kMax, 0, -1});
    text = "split(" + std::to_string(split_size) + ", " + std::to_string(dim) + ")";
    parts = [=](const ts::Tensor& t) { return ts::split(t, split_size, dim); };
    // torch.split: split_size 0 only for an empty dim (one empty piece, added below).
    valid = valid && (split_size > 0 || (split_size == 0 && size == 0));
    for (int64_t at = 0; split_size > 0 && at < size; at += std::min(split_size, size - at))
      lengths.push_back(std::min(split_size, size - at));
  } else {
    int64_t left = size;
    const int64_t count = rng.in(1, 4);
    for (int64_t i = 0; i + 1 < count; ++i) {
      lengths.push_back(rng.in(0, left));
      left -= lengths.back();
    }
    lengths.push_back(left);
    if (rng.percent(12)) lengths[0] += rng.pick<int64_t>({1, -size - 1});
    text = "split(" + text_of(lengths) + ", " + std::to_string(dim) + ")";
    parts = [=](const ts::Tensor& t) { return ts::split(t, lengths, dim); };
    int64_t sum = 0;
    for (int64_t l : lengths) {
      valid = valid && l >= 0;
      sum += l;
    }
    valid = valid && sum == size;
  }
  if (lengths.empty()) lengths.push_back(0);
  const auto k = static_cast<size_t>(rng.in(0, static_cast<int64_t>(lengths.size()) - 1));
  Step s{text + "[" + std::to_string(k) + "]",
         [=](const ts::Tensor& t) {
           const std::vector<ts::Tensor> all = parts(t);
           REQUIRE(all.size() == lengths.size());
           return all[k];
         },
         std::nullopt};
  if (!valid) return s;
  int64_t first = 0;
  for (size_t i = 0; i < k; ++i) first += lengths[i];
  Index out = m.shape;
  out[*d] = lengths[k];
  s.expected = remap(m, out, [&](Index i) {
    i[*d] += first;
    return i;
  });
  return s;
}

Step random_step(Rng& rng, const Model& m) {
  const bool can_grow = m.shape.size() < kMaxModelDims;
  switch (rng.in(0, 13)) {
    case 0:
      return narrow_step(rng, m);
    case 1:
    case 2:
      return slice_step(rng, m);
    case 3:
      return select_step(rng, m);
    case 4:
      return transpose_step(rng, m);
    case 5:
      return permute_step(rng, m);
    case 6:
      return flip_step(rng, m);
    case 7:
      return can_grow ? expand_step(rng, m) : flip_step(rng, m);
    case 8:
      return can_grow ? unsqueeze_step(rng, m) : squeeze_step(rng, m);
    case 9:
      return squeeze_step(rng, m);
    case 10:
      return reshape_step(rng, m, false);
    case 11:
      return reshape_step(rng, m, true);
    case 12:
      return flatten_step(rng, m);
    default:
      return piece_step(rng, m);
  }
}

struct Counts {
  int64_t chains = 0, valid_steps = 0, invalid_steps = 0, alias_checks = 0;
};

void run_chain(Rng& rng, Counts& counts) {
  const int64_t dims = rng.in(1, 4);
  Index shape;
  for (int64_t i = 0; i < dims; ++i) shape.push_back(rng.in(0, 5));
  const int64_t numel = count_of(shape);
  Model model{shape, {}, {}, false};
  for (int64_t i = 0; i < numel; ++i) model.value.push_back(i), model.where.push_back(i);
  const ts::Tensor base = ts::arange(numel).reshape(shape);
  ts::Tensor t = base;

  std::string trace = "arange(" + std::to_string(numel) + ").reshape(" + text_of(shape) + ")";
  INFO(trace);
  const int64_t length = rng.in(1, 6);
  for (int64_t step_no = 0; step_no < length; ++step_no) {
    Step step = random_step(rng, model);
    trace += "." + step.text;
    if (!step.expected) {
      CHECK_THROWS_AS(step.run(t), ts::Error);
      trace += " (threw, as expected)";
      ++counts.invalid_steps;
      continue;
    }
    t = step.run(t);
    model = std::move(*step.expected);
    REQUIRE(t.sizes() == model.shape);
    REQUIRE(t.to_vector<int64_t>() == model.value);
    CHECK(t.is_contiguous() == consecutive(model.where));
    ++counts.valid_steps;
  }
  // The view must alias the base exactly where the oracle says, unless a reshape had to copy.
  if (!model.own_storage && !model.value.empty()) {
    t.fill_(-1);
    std::vector<int64_t> expected(static_cast<size_t>(numel));
    for (int64_t i = 0; i < numel; ++i) expected[static_cast<size_t>(i)] = i;
    for (int64_t w : model.where) expected[static_cast<size_t>(w)] = -1;
    CHECK(base.reshape({-1}).to_vector<int64_t>() == expected);
    ++counts.alias_checks;
  }
  ++counts.chains;
}

}  // namespace

TEST_CASE("random chains of views match an independent index oracle") {
  Rng rng(0x7e55e7a9);
  Counts counts;
  constexpr int64_t kChains = 20000;
  for (int64_t i = 0; i < kChains; ++i) run_chain(rng, counts);
  std::printf(
      "[view_property_test] %lld chains, %lld valid view steps checked element by element, %lld invalid "
      "ones rejected, %lld aliasing checks\n",
      static_cast<long long>(counts.chains), static_cast<long long>(counts.valid_steps),
      static_cast<long long>(counts.invalid_steps), static_cast<long long>(counts.alias_checks));
  CHECK(counts.chains == kChains);
  // The generator must keep reaching both sides: thousands of valid steps and hundreds of errors.
  CHECK(counts.valid_steps > 10000);
  CHECK(counts.invalid_steps > 1000);
}

// Found by the chains above: a 0-d tensor takes dim 0 or -1 where PyTorch allows it (flip, squeeze,
// flatten, transpose) and is refused by the ops that need a real dim, instead of reading sizes[0]
// of an empty shape.
TEST_CASE("0-d tensors and dim arguments") {
  const ts::Tensor x = ts::arange(5)[3];
  REQUIRE(x.dim() == 0);
  CHECK(x.flip({0}).item<int64_t>() == 3);
  CHECK(x.flip({-1}).item<int64_t>() == 3);
  CHECK_THROWS_WITH_AS(x.flip({0, -1}), doctest::Contains("flip: dim 0 appears twice"), ts::Error);
  CHECK_THROWS_WITH_AS(x.flip({1}), doctest::Contains("flip: dim 1 is out of range for a tensor of 0 dims"),
                       ts::Error);
  CHECK(x.squeeze(-1).item<int64_t>() == 3);
  CHECK_THROWS_WITH_AS(x.squeeze(1), doctest::Contains("squeeze: dim 1 is out of range"), ts::Error);
  test::check_values<int64_t>(x.flatten(0, -1), {1}, {3});
  CHECK_THROWS_WITH_AS(x.flatten(0, 2), doctest::Contains("flatten: dim 2 is out of range"), ts::Error);
  CHECK(x.transpose(0, -1).item<int64_t>() == 3);
  CHECK_THROWS_WITH_AS(x.narrow(0, 0, 1), doctest::Contains("narrow: cannot narrow a 0-d tensor"), ts::Error);
  CHECK_THROWS_WITH_AS(x.slice(0, 0, 1), doctest::Contains("slice: cannot slice a 0-d tensor"), ts::Error);
  CHECK_THROWS_WITH_AS(x.select(0, 0), doctest::Contains("select: cannot index a 0-d tensor"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::chunk(x, 2), doctest::Contains("chunk: cannot chunk a 0-d tensor"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::split(x, 1), doctest::Contains("split: cannot split a 0-d tensor"), ts::Error);
  CHECK_THROWS_WITH_AS(x.size(0), doctest::Contains("size: cannot take dim 0 of a 0-d tensor"), ts::Error);
  CHECK_THROWS_WITH_AS(x.size(-1), doctest::Contains("cannot take dim -1"), ts::Error);
}
