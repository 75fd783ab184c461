// Element-wise ops: binary arithmetic and comparisons, bitwise reductions, unary math, gelu_grad.
#include <map>

#include <tessera/autograd.hpp>
#include <tessera/dist.hpp>
#include <tessera/errors.hpp>
#include <tessera/factories.hpp>
#include <tessera/local.hpp>
#include <tessera/ops.hpp>

#include "cases.hpp"

namespace conformance {

namespace ts = tessera;

namespace {

using Binary = ts::Tensor (*)(const ts::Tensor&, const ts::Tensor&);
using Unary = ts::Tensor (*)(const ts::Tensor&);

Binary binary_function(const std::string& op) {
  static const std::map<std::string, Binary> functions = {
      {"add", [](const ts::Tensor& a, const ts::Tensor& b) { return ts::add(a, b); }},
      {"sub", [](const ts::Tensor& a, const ts::Tensor& b) { return ts::sub(a, b); }},
      {"mul", [](const ts::Tensor& a, const ts::Tensor& b) { return ts::mul(a, b); }},
      {"div", [](const ts::Tensor& a, const ts::Tensor& b) { return ts::div(a, b); }},
      {"pow", [](const ts::Tensor& a, const ts::Tensor& b) { return ts::pow(a, b); }},
      {"maximum", [](const ts::Tensor& a, const ts::Tensor& b) { return ts::maximum(a, b); }},
      {"minimum", [](const ts::Tensor& a, const ts::Tensor& b) { return ts::minimum(a, b); }},
      {"eq", [](const ts::Tensor& a, const ts::Tensor& b) { return ts::eq(a, b); }},
      {"ne", [](const ts::Tensor& a, const ts::Tensor& b) { return ts::ne(a, b); }},
      {"lt", [](const ts::Tensor& a, const ts::Tensor& b) { return ts::lt(a, b); }},
      {"le", [](const ts::Tensor& a, const ts::Tensor& b) { return ts::le(a, b); }},
      {"gt", [](const ts::Tensor& a, const ts::Tensor& b) { return ts::gt(a, b); }},
      {"ge", [](const ts::Tensor& a, const ts::Tensor& b) { return ts::ge(a, b); }},
  };
  return functions.at(op);
}

Unary unary_function(const std::string& op) {
  static const std::map<std::string, Unary> functions = {
      {"neg", [](const ts::Tensor& a) { return ts::neg(a); }},
      {"abs", [](const ts::Tensor& a) { return ts::abs(a); }},
      {"relu", [](const ts::Tensor& a) { return ts::relu(a); }},
      {"exp", [](const ts::Tensor& a) { return ts::exp(a); }},
      {"log", [](const ts::Tensor& a) { return ts::log(a); }},
      {"sqrt", [](const ts::Tensor& a) { return ts::sqrt(a); }},
      {"tanh", [](const ts::Tensor& a) { return ts::tanh(a); }},
      {"sigmoid", [](const ts::Tensor& a) { return ts::sigmoid(a); }},
      {"gelu", [](const ts::Tensor& a) { return ts::gelu(a); }},
  };
  return functions.at(op);
}

bool is_comparison(const std::string& op) {
  return op == "eq" || op == "ne" || op == "lt" || op == "le" || op == "gt" || op == "ge";
}

// The collective reduction whose combining kernel is `op` (nullopt when none is).
std::optional<ts::ReduceOp> reduce_op_of(const std::string& op) {
  static const std::map<std::string, ts::ReduceOp::Kind> kinds = {
      {"add", ts::ReduceOp::SUM},          {"mul", ts::ReduceOp::PRODUCT},
      {"maximum", ts::ReduceOp::MAX},      {"minimum", ts::ReduceOp::MIN},
      {"bitwise_and", ts::ReduceOp::BAND}, {"bitwise_or", ts::ReduceOp::BOR},
      {"bitwise_xor", ts::ReduceOp::BXOR},
  };
  if (auto it = kinds.find(op); it != kinds.end()) return ts::ReduceOp(it->second);
  return std::nullopt;
}

// all_reduce over one simulated rank per input: the executor combines with the op's kernel writing
// into its first input (out aliases a), as KERNELS.md requires kernels to allow. Rank 0's result.
Case collective_case(const std::string& name, std::vector<ts::Tensor> inputs, ts::ReduceOp reduce) {
  return {name, std::move(inputs), [reduce](const std::vector<ts::Tensor>& in, const std::string&) {
            // Clones: the collective writes in place, and the inputs are used again for the other side.
            std::vector<std::pair<int, ts::Tensor>> shards;
            for (size_t r = 0; r < in.size(); ++r) shards.emplace_back(static_cast<int>(r), in[r].clone());
            ts::Tensor ranks = ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(shards)));
            ts::dist::all_reduce(ranks, reduce);
            return ranks.shard(0);
          }};
}

struct BinaryDomains {
  Domain a;
  Domain b;
};

BinaryDomains binary_domains(const std::string& op) {
  if (op == "mul") return {Domain::kMedium, Domain::kMedium};
  if (op == "pow") return {Domain::kPowBase, Domain::kPowExponent};
  if (op == "maximum" || op == "minimum" || is_comparison(op)) return {Domain::kTies, Domain::kTies};
  return {Domain::kWide, Domain::kWide};
}

}  // namespace

CaseGroup binary_cases(ValueSource& values, const std::string& op, ts::DType dtype) {
  const Binary fn = binary_function(op);
  const BinaryDomains domains = binary_domains(op);
  CaseGroup group;
  // IEEE add, sub, mul and div are correctly rounded, so exact; pow is a math function.
  group.exactness = op == "pow" ? Exactness::kElementwise : Exactness::kExact;
  for (const Layout& layout : all_layouts()) {
    group.cases.push_back(
        {layout.name,
         {values.make(layout.base, dtype, domains.a), values.make(layout.base, dtype, domains.b)},
         [fn, view = layout.view](const std::vector<ts::Tensor>& in, const std::string&) {
           return fn(view(in[0]), view(in[1]));
         }});
  }
  // NumPy broadcasting done by the core: b's rows repeat with stride 0.
  group.cases.push_back(
      {"7x5 with 5 (broadcast operand)",
       {values.make({7, 5}, dtype, domains.a), values.make({5}, dtype, domains.b)},
       [fn](const std::vector<ts::Tensor>& in, const std::string&) { return fn(in[0], in[1]); }});
  group.cases.push_back({"transposed with flipped",
                         {values.make({5, 7}, dtype, domains.a), values.make({7, 5}, dtype, domains.b)},
                         [fn](const std::vector<ts::Tensor>& in, const std::string&) {
                           return fn(in[0].t(), in[1].flip({0}));
                         }});
  // NaN, infinities and signed zeros against each other (reversed, so each meets a different value);
  // for integers the extremes of the type, where no result can overflow.
  const bool integer_extremes_safe = op == "maximum" || op == "minimum" || is_comparison(op);
  if (ts::is_floating(dtype) || (dtype != ts::kBool && integer_extremes_safe)) {
    group.cases.push_back(
        {"special values",
         {values.make({14}, dtype, Domain::kSpecial), values.make({14}, dtype, Domain::kSpecial)},
         [fn](const std::vector<ts::Tensor>& in, const std::string&) { return fn(in[0], in[1].flip({0})); }});
  }
  if (op == "pow" && !ts::is_floating(dtype)) {
    // KERNELS.md: a negative integer exponent is an error (on both backends, as a ts::Error).
    group.cases.push_back(
        {"negative integer exponent (an error)",
         {values.make({3}, dtype, Domain::kPowBase)},
         [](const std::vector<ts::Tensor>& in, const std::string&) { return ts::pow(in[0], -1); }});
  }
  if (std::optional<ts::ReduceOp> reduce = reduce_op_of(op)) {
    for (const Layout& layout : contiguous_layouts())
      group.cases.push_back(collective_case(
          "in place (all_reduce " + reduce->to_string() + "), " + layout.name,
          {values.make(layout.base, dtype, domains.a), values.make(layout.base, dtype, domains.b)}, *reduce));
  }
  return group;
}

CaseGroup bitwise_cases(ValueSource& values, const std::string& op, ts::DType dtype) {
  CaseGroup group;
  const ts::ReduceOp reduce = *reduce_op_of(op);
  for (const Layout& layout : contiguous_layouts())
    group.cases.push_back(collective_case(
        "all_reduce " + reduce.to_string() + ", " + layout.name,
        {values.make(layout.base, dtype, Domain::kWide), values.make(layout.base, dtype, Domain::kWide)},
        reduce));
  if (dtype != ts::kBool)
    group.cases.push_back(collective_case(
        "all_reduce " + reduce.to_string() + ", special values",
        {values.make({14}, dtype, Domain::kSpecial), values.make({14}, dtype, Domain::kWide)}, reduce));
  return group;
}

CaseGroup unary_cases(ValueSource& values, const std::string& op, ts::DType dtype) {
  const Unary fn = unary_function(op);
  const Domain domain = op == "log" || op == "sqrt" ? Domain::kPositive : Domain::kWide;
  CaseGroup group;
  group.exactness = op == "neg" || op == "abs" || op == "relu" ? Exactness::kExact : Exactness::kElementwise;
  for (const Layout& layout : all_layouts())
    group.cases.push_back({layout.name,
                           {values.make(layout.base, dtype, domain)},
                           [fn, view = layout.view](const std::vector<ts::Tensor>& in, const std::string&) {
                             return fn(view(in[0]));
                           }});
  // Integers' extremes overflow neg and abs (no defined result), so special values are float only.
  if (ts::is_floating(dtype))
    group.cases.push_back(
        {"special values",
         {values.make({14}, dtype, Domain::kSpecial)},
         [fn](const std::vector<ts::Tensor>& in, const std::string&) { return fn(in[0]); }});
  return group;
}

CaseGroup gelu_grad_cases(ValueSource& values, const std::string&, ts::DType dtype) {
  CaseGroup group;
  // A broadcast input's gradient is a sum over the broadcast dim.
  group.exactness = Exactness::kAccumulating;
  auto add_case = [&](const std::string& name, ts::Tensor input,
                      const std::function<ts::Tensor(const ts::Tensor&)>& view) {
    group.cases.push_back(
        {name, {std::move(input)}, [view](const std::vector<ts::Tensor>& in, const std::string&) {
           ts::Tensor x = in[0].detach();
           x.set_requires_grad(true);
           ts::Tensor y = ts::gelu(view(x));
           y.backward(ts::ones_like(y));
           return x.grad();
         }});
  };
  for (const Layout& layout : all_layouts())
    add_case(layout.name, values.make(layout.base, dtype, Domain::kWide), layout.view);
  add_case("special values", values.make({14}, dtype, Domain::kSpecial),
           [](const ts::Tensor& t) { return t; });
  return group;
}

CaseGroup fold_cases(ValueSource& values, const std::string& op, ts::DType dtype) {
  const std::string binary = op.substr(std::string("fold_").size());
  const ts::ReduceOp reduce = *reduce_op_of(binary);
  const Domain domain = binary == "mul"                              ? Domain::kMedium
                        : binary == "maximum" || binary == "minimum" ? Domain::kTies
                                                                     : Domain::kWide;
  CaseGroup group;
  // With a multiple of the rank count per rank, each wave of the ring's reduce-scatter continues
  // the one before: the chains of p - 1 reductions go to the fold (on a host backend).
  for (const int ranks : {5, 7}) {
    std::vector<ts::Tensor> inputs;
    for (int r = 0; r < ranks; ++r) inputs.push_back(values.make({3 * ranks}, dtype, domain));
    group.cases.push_back(collective_case("ring all_reduce " + reduce.to_string() + " over " +
                                              std::to_string(ranks) + " ranks, 3 elements a chain",
                                          std::move(inputs), reduce));
  }
  if (ts::is_floating(dtype) || binary == "maximum" || binary == "minimum") {
    std::vector<ts::Tensor> inputs;
    for (int r = 0; r < 5; ++r)
      inputs.push_back(values.make({15}, dtype, r % 2 == 0 ? Domain::kSpecial : domain));
    if (dtype != ts::kBool)
      group.cases.push_back(collective_case("ring all_reduce " + reduce.to_string() + ", special values",
                                            std::move(inputs), reduce));
  }
  return group;
}

}  // namespace conformance
