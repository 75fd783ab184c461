// mm and bmm through ts::matmul (strided, transposed and empty operands, broadcast batches), and
// softmax / log_softmax over the last dim and another one.
#include <tessera/ops.hpp>

#include "cases.hpp"

namespace conformance {

namespace ts = tessera;

namespace {

using View = std::function<ts::Tensor(const ts::Tensor&)>;

ts::Tensor same(const ts::Tensor& t) { return t; }

Case matmul_case(ValueSource& values, ts::DType dtype, std::string name, const ts::Shape& a,
                 const View& view_a, const ts::Shape& b, const View& view_b) {
  const Domain domain = Domain::kUnit;  // small products: sums of them compare tightly
  return {std::move(name),
          {values.make(a, dtype, domain), values.make(b, dtype, domain)},
          [view_a, view_b](const std::vector<ts::Tensor>& in, const std::string&) {
            return ts::matmul(view_a(in[0]), view_b(in[1]));
          }};
}

}  // namespace

CaseGroup matmul_cases(ValueSource& values, const std::string& op, ts::DType dtype) {
  CaseGroup group;
  group.exactness = Exactness::kAccumulating;
  auto t = [](const ts::Tensor& x) { return x.t(); };
  if (op == "mm") {
    group.cases.push_back(matmul_case(values, dtype, "7x5 @ 5x3", {7, 5}, same, {5, 3}, same));
    group.cases.push_back(matmul_case(values, dtype, "1x1 @ 1x1", {1, 1}, same, {1, 1}, same));
    group.cases.push_back(matmul_case(values, dtype, "transposed @ transposed", {5, 7}, t, {3, 5}, t));
    group.cases.push_back(matmul_case(
        values, dtype, "step-sliced @ flipped", {7, 10},
        [](const ts::Tensor& x) { return x.slice(1, 0, 10, 2); }, {5, 3},
        [](const ts::Tensor& x) {
          return x.flip({0, 1});
        }));
    group.cases.push_back(matmul_case(values, dtype, "k = 0: 7x0 @ 0x3", {7, 0}, same, {0, 3}, same));
    group.cases.push_back(matmul_case(values, dtype, "m = 0: 0x5 @ 5x3", {0, 5}, same, {5, 3}, same));
    group.cases.push_back(matmul_case(values, dtype, "vector @ matrix", {5}, same, {5, 3}, same));
    group.cases.push_back(matmul_case(values, dtype, "33x17 @ 17x9", {33, 17}, same, {17, 9}, same));
  } else {
    group.cases.push_back(matmul_case(values, dtype, "2x7x5 @ 2x5x3", {2, 7, 5}, same, {2, 5, 3}, same));
    group.cases.push_back(
        matmul_case(values, dtype, "7x5 @ 3x5x2 (batch stride 0)", {7, 5}, same, {3, 5, 2}, same));
    group.cases.push_back(matmul_case(
        values, dtype, "expanded batch @ 4x5x3", {1, 7, 5},
        [](const ts::Tensor& x) {
          return x.expand({4, 7, 5});
        },
        {4, 5, 3}, same));
    group.cases.push_back(matmul_case(
        values, dtype, "permuted @ transposed", {7, 2, 5},
        [](const ts::Tensor& x) {
          return x.permute({1, 0, 2});
        },
        {2, 3, 5}, [](const ts::Tensor& x) { return x.transpose(1, 2); }));
    group.cases.push_back(matmul_case(values, dtype, "0 batches", {0, 7, 5}, same, {0, 5, 3}, same));
    group.cases.push_back(matmul_case(values, dtype, "k = 0", {2, 7, 0}, same, {2, 0, 3}, same));
    group.cases.push_back(matmul_case(values, dtype, "1x1x1 @ 1x1x1", {1, 1, 1}, same, {1, 1, 1}, same));
  }
  return group;
}

CaseGroup softmax_cases(ValueSource& values, const std::string& op, ts::DType dtype) {
  CaseGroup group;
  group.exactness = Exactness::kAccumulating;
  const bool log = op == "log_softmax";
  for (const Layout& layout : all_layouts()) {
    const bool scalar = layout.base.empty();
    for (int64_t dim : scalar ? std::vector<int64_t>{-1} : std::vector<int64_t>{-1, 0}) {
      group.cases.push_back(
          {layout.name + ", dim " + std::to_string(dim),
           {values.make(layout.base, dtype, Domain::kWide)},
           [log, dim, view = layout.view](const std::vector<ts::Tensor>& in, const std::string&) {
             return log ? ts::log_softmax(view(in[0]), dim) : ts::softmax(view(in[0]), dim);
           }});
    }
  }
  // Rows with NaN and infinities (a -inf entry has probability 0; +inf makes the row NaN).
  group.cases.push_back({"special values",
                         {values.make({2, 7}, dtype, Domain::kSpecial)},
                         [log](const std::vector<ts::Tensor>& in, const std::string&) {
                           return log ? ts::log_softmax(in[0], -1) : ts::softmax(in[0], -1);
                         }});
  // Large logits: only a max-subtracting kernel stays finite.
  // (Scaled on the oracle, so that the case needs no other kernel of the tested backend.)
  group.cases.push_back({"large logits",
                         {ts::add(ts::mul(values.make({3, 5}, dtype, Domain::kWide), 10.0), 80.0)},
                         [log](const std::vector<ts::Tensor>& in, const std::string&) {
                           return log ? ts::log_softmax(in[0], -1) : ts::softmax(in[0], -1);
                         }});
  return group;
}

}  // namespace conformance
