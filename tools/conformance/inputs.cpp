#include "inputs.hpp"

#include <cmath>
#include <limits>

#include <tessera/errors.hpp>
#include <tessera/factories.hpp>

namespace conformance {

namespace ts = tessera;

namespace {

int64_t shape_numel(const ts::Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const std::vector<double>& special_floats() {
  static const std::vector<double> values = {std::numeric_limits<double>::quiet_NaN(),
                                             std::numeric_limits<double>::infinity(),
                                             -std::numeric_limits<double>::infinity(),
                                             0.0,
                                             -0.0,
                                             2.7,
                                             -2.7,
                                             0.5,
                                             -0.5,
                                             1e20,
                                             -1e20,
                                             3e9,
                                             -3e9,
                                             1.0};
  return values;
}

}  // namespace

double ValueSource::draw_float(Domain domain) {
  auto uniform = [&](double low, double high) {
    return std::uniform_real_distribution<double>(low, high)(engine_);
  };
  switch (domain) {
    case Domain::kUnit:
      return uniform(-1, 1);
    case Domain::kTies:
      return 0.5 * static_cast<double>(std::uniform_int_distribution<int>(-4, 4)(engine_));
    case Domain::kPositive:
      return uniform(0.01, 10);
    case Domain::kPowBase:
      return uniform(0.1, 3);
    case Domain::kPowExponent:
      return uniform(-2, 2);
    case Domain::kWide:
    case Domain::kMedium:
    case Domain::kSpecial:
      break;
  }
  return uniform(-4, 4);
}

int64_t ValueSource::draw_integer(ts::DType dtype, Domain domain) {
  auto in = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(engine_);
  };
  if (dtype == ts::kBool) return in(0, 1);
  switch (domain) {
    case Domain::kWide:
      return dtype == ts::kInt64 ? in(-(int64_t{1} << 40), int64_t{1} << 40) : in(-1000000, 1000000);
    case Domain::kUnit:
      return in(-100, 100);
    case Domain::kTies:
    case Domain::kPowBase:
      return in(-3, 3);
    case Domain::kPositive:
      return in(1, 10);
    case Domain::kPowExponent:
      return in(0, 6);
    case Domain::kMedium:
    case Domain::kSpecial:
      break;
  }
  return in(-1000, 1000);
}

ts::Tensor ValueSource::make(const ts::Shape& shape, ts::DType dtype, Domain domain) {
  const ts::TensorOptions options = ts::TensorOptions(dtype).backend(oracle_);
  const auto n = static_cast<size_t>(shape_numel(shape));
  if (ts::is_floating(dtype)) {
    std::vector<double> values(n);
    for (size_t i = 0; i < n; ++i)
      values[i] =
          domain == Domain::kSpecial ? special_floats()[i % special_floats().size()] : draw_float(domain);
    return ts::from_values(values, shape, options);
  }
  std::vector<long long> values(n);
  for (size_t i = 0; i < n; ++i) {
    if (domain == Domain::kSpecial && dtype != ts::kBool) {
      // The extremes of the type, zero and -1: what overflowing or truncating kernels get wrong.
      const int64_t low =
          dtype == ts::kInt32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
      const int64_t high =
          dtype == ts::kInt32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
      const int64_t cycle[] = {low, high, 0, -1, 1, high - 1, low + 1};
      values[i] = cycle[i % 7];
    } else {
      values[i] = draw_integer(dtype, domain);
    }
  }
  return ts::from_values(values, shape, options);
}

namespace {

ts::Tensor identity(const ts::Tensor& t) { return t; }

std::vector<Layout> contiguous_set() {
  return {{"0-d", {}, identity},     {"1-element", {1}, identity},
          {"0-size", {0}, identity}, {"0-size 3x0", {3, 0}, identity},
          {"7x5", {7, 5}, identity}, {"3-d 2x3x4", {2, 3, 4}, identity}};
}

}  // namespace

const std::vector<Layout>& contiguous_layouts() {
  static const std::vector<Layout> layouts = contiguous_set();
  return layouts;
}

const std::vector<Layout>& all_layouts() {
  static const std::vector<Layout> layouts = [] {
    std::vector<Layout> all = contiguous_set();
    all.push_back({"transposed", {5, 7}, [](const ts::Tensor& t) { return t.t(); }});
    all.push_back({"step-sliced", {7, 10}, [](const ts::Tensor& t) { return t.slice(1, 0, 10, 2); }});
    all.push_back({"broadcast", {7, 1}, [](const ts::Tensor& t) { return t.expand({7, 5}); }});
    all.push_back({"flipped", {7, 5}, [](const ts::Tensor& t) { return t.flip({0, 1}); }});
    all.push_back({"permuted 3-d", {3, 4, 2}, [](const ts::Tensor& t) { return t.permute({2, 0, 1}); }});
    return all;
  }();
  return layouts;
}

std::string shape_text(const ts::Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

const Layout& layout(const std::string& name) {
  for (const Layout& candidate : all_layouts())
    if (candidate.name == name) return candidate;
  throw ts::Error("conformance: no layout named '" + name + "'");
}

}  // namespace conformance
