// Creation ops: fill, arange, eye (factories on the tested backend) and uniform, normal (rand and
// randn with generators of one seed on both backends: the counter-based stream gives equal values).
#include <tessera/factories.hpp>
#include <tessera/generator.hpp>

#include "cases.hpp"

namespace conformance {

namespace ts = tessera;

namespace {

Case creation_case(std::string name, const std::function<ts::Tensor(const ts::TensorOptions&)>& make,
                   ts::DType dtype) {
  return {std::move(name), {}, [make, dtype](const std::vector<ts::Tensor>&, const std::string& backend) {
            return make(ts::TensorOptions(dtype).backend(backend));
          }};
}

std::vector<ts::Scalar> fill_values(ts::DType dtype) {
  switch (dtype) {
    case ts::DType::Bool:
      return {true, false};
    case ts::DType::Int32:
      return {0, -7, 2147483647};
    case ts::DType::Int64:
      return {0, -7, (int64_t{1} << 53) + 1};  // past double's exact integers
    case ts::DType::Int8:
      return {0, -7, -128};
    case ts::DType::UInt8:
      return {0, 7, 255};
    case ts::DType::Float32:
    case ts::DType::Float64:
    case ts::DType::BFloat16:
    case ts::DType::Float16:
      break;
  }
  return {0.0, -2.75, 1e-3, 1.0 / 3.0};
}

void add_fill_cases(CaseGroup& group, ts::DType dtype) {
  for (const ts::Scalar& value : fill_values(dtype)) {
    for (const ts::Shape& shape : {ts::Shape{}, ts::Shape{0}, ts::Shape{1}, ts::Shape{7, 5}}) {
      std::string name = "full(" + shape_text(shape) + ", " + value.to_string() + ")";
      group.cases.push_back(creation_case(
          name, [shape, value](const ts::TensorOptions& o) { return ts::full(shape, value, o); }, dtype));
    }
    // fill_ of a strided view writes only its elements.
    group.cases.push_back(creation_case(
        "fill_ of a step-sliced view, " + value.to_string(),
        [value](const ts::TensorOptions& o) {
          ts::Tensor t = ts::zeros({7, 10}, o);
          t.slice(1, 1, 10, 3).fill_(value);
          return t;
        },
        dtype));
  }
  group.cases.push_back(creation_case(
      "ones 7x5",
      [](const ts::TensorOptions& o) {
        return ts::ones({7, 5}, o);
      },
      dtype));
}

void add_arange_cases(CaseGroup& group, ts::DType dtype) {
  struct Range {
    ts::Scalar start, end, step;
  };
  std::vector<Range> ranges;
  if (ts::is_floating(dtype))
    ranges = {{0.0, 10.0, 1.0},  {0.5, 3.7, 0.3}, {-1.0, 1.0, 0.25},
              {2.0, -3.0, -0.7}, {0.0, 0.0, 1.0}, {1.0, 1.5, 1.0}};
  else
    ranges = {{0, 10, 1}, {-5, 20, 3}, {10, -10, -4}, {0, 0, 1}, {7, 8, 1}};
  for (const Range& r : ranges) {
    std::string name =
        "arange(" + r.start.to_string() + ", " + r.end.to_string() + ", " + r.step.to_string() + ")";
    group.cases.push_back(creation_case(
        name, [r](const ts::TensorOptions& o) { return ts::arange(r.start, r.end, r.step, o); }, dtype));
  }
}

void add_eye_cases(CaseGroup& group, ts::DType dtype) {
  for (auto sizes : {std::pair<int64_t, int64_t>{0, 0}, {1, 1}, {4, 4}, {3, 5}, {5, 3}, {0, 3}}) {
    // Named, not structured bindings: clang 14 cannot capture one.
    const int64_t n = sizes.first, m = sizes.second;
    group.cases.push_back(creation_case(
        "eye(" + std::to_string(n) + ", " + std::to_string(m) + ")",
        [n, m](const ts::TensorOptions& o) { return ts::eye(n, m, o); }, dtype));
  }
}

}  // namespace

CaseGroup creation_cases(ValueSource&, const std::string& op, ts::DType dtype) {
  CaseGroup group;  // KERNELS.md defines every value exactly
  if (op == "fill") add_fill_cases(group, dtype);
  if (op == "arange") add_arange_cases(group, dtype);
  if (op == "eye") add_eye_cases(group, dtype);
  return group;
}

CaseGroup random_cases(ValueSource& values, const std::string& op, ts::DType dtype) {
  CaseGroup group;
  // Computed in double and rounded once; another backend's transcendental functions (normal) may
  // differ in the last bit, hence a tolerance rather than exactness.
  group.exactness = Exactness::kElementwise;
  const bool normal = op == "normal";
  // One seed per run (from --seed), drawn from the value source so that --seed changes it.
  const uint64_t seed =
      static_cast<uint64_t>(values.make({1}, ts::kInt64, Domain::kWide).item<int64_t>()) & 0xffffffffu;
  for (const ts::Shape& shape : {ts::Shape{}, ts::Shape{0}, ts::Shape{1}, ts::Shape{7, 5}, ts::Shape{1001}}) {
    // The second draw starts at a non-zero offset (after the 3 counters of the first).
    group.cases.push_back(creation_case(
        shape_text(shape) + " after 3 numbers (offset 3)",
        [normal, seed, shape](const ts::TensorOptions& o) {
          ts::Generator generator(seed);
          (void)(normal ? ts::randn({3}, generator, o) : ts::rand({3}, generator, o));
          return normal ? ts::randn(shape, generator, o) : ts::rand(shape, generator, o);
        },
        dtype));
  }
  return group;
}

}  // namespace conformance
