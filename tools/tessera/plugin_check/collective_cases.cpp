#include "plugin_check/collective_cases.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace tessera::cli::check {
namespace {

// Products of at most 16 of these stay within 2^16: exact in float32.
constexpr int64_t kFactors[] = {-2, -1, 1, 2};

bool integral(DType dtype) { return dtype == kInt32 || dtype == kInt64; }

std::vector<ReduceOp::Kind> ops_for(DType dtype) {
  std::vector<ReduceOp::Kind> ops = {ReduceOp::SUM, ReduceOp::PRODUCT, ReduceOp::MIN, ReduceOp::MAX};
  if (integral(dtype)) ops.insert(ops.end(), {ReduceOp::BAND, ReduceOp::BOR, ReduceOp::BXOR});
  return ops;
}

int64_t combine(ReduceOp::Kind op, int64_t a, int64_t b) {
  switch (op) {
    case ReduceOp::PRODUCT:
      return a * b;
    case ReduceOp::MIN:
      return std::min(a, b);
    case ReduceOp::MAX:
      return std::max(a, b);
    case ReduceOp::BAND:
      return a & b;
    case ReduceOp::BOR:
      return a | b;
    case ReduceOp::BXOR:
      return a ^ b;
    default:
      return a + b;
  }
}

// op over element `index` of every rank's input.
int64_t folded(const CollectiveCase& c, int64_t index) {
  int64_t value = input_value(c, 0, index);
  for (int rank = 1; rank < c.group_size; ++rank) value = combine(c.op, value, input_value(c, rank, index));
  return value;
}

}  // namespace

std::string_view collective_name(Collective collective) {
  constexpr std::string_view names[] = {"all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter",
                                        "all_to_all", "scatter",   "gather", "barrier"};
  return names[static_cast<int>(collective)];
}

bool is_reducing(Collective collective) {
  return collective == Collective::all_reduce || collective == Collective::reduce ||
         collective == Collective::reduce_scatter;
}

bool is_rooted(Collective collective) {
  return collective == Collective::broadcast || collective == Collective::reduce ||
         collective == Collective::scatter || collective == Collective::gather;
}

std::string_view reduce_op_name(ReduceOp::Kind op) {
  switch (op) {
    case ReduceOp::PRODUCT:
      return "product";
    case ReduceOp::MIN:
      return "min";
    case ReduceOp::MAX:
      return "max";
    case ReduceOp::BAND:
      return "band";
    case ReduceOp::BOR:
      return "bor";
    case ReduceOp::BXOR:
      return "bxor";
    default:
      return "sum";
  }
}

namespace {

std::string described(const CollectiveCase& c, bool with_dtype) {
  std::string text = fmt::format("{} p={}", collective_name(c.collective), c.group_size);
  if (c.collective == Collective::barrier) return text;
  text += fmt::format(" count={}", c.count);
  if (with_dtype) text += fmt::format(" {}", dtype_name(c.dtype));
  if (is_reducing(c.collective)) text += fmt::format(" {}", reduce_op_name(c.op));
  if (is_rooted(c.collective)) text += fmt::format(" root={}", c.root);
  return text;
}

}  // namespace

std::string CollectiveCase::describe() const { return described(*this, true); }
std::string CollectiveCase::describe_request() const { return described(*this, false); }

const std::vector<int>& checked_group_sizes() {
  static const std::vector<int> sizes = {1, 2, 3, 4, 7, 8, 16};
  return sizes;
}

std::vector<CollectiveCase> cases_for(Collective collective, int group_size) {
  if (collective == Collective::barrier) return {CollectiveCase{collective, group_size, 0, kFloat32}};
  std::vector<int> roots = {0};
  if (is_rooted(collective) && group_size > 1) roots.push_back(group_size - 1);
  std::vector<CollectiveCase> cases;
  for (int64_t count : {0, 1, 5, 1000})
    for (DType dtype : {kFloat32, kFloat64, kInt32, kInt64}) {
      const std::vector<ReduceOp::Kind> ops =
          is_reducing(collective) ? ops_for(dtype) : std::vector<ReduceOp::Kind>{ReduceOp::SUM};
      for (ReduceOp::Kind op : ops)
        for (int root : roots) cases.push_back({collective, group_size, count, dtype, op, root});
    }
  return cases;
}

int64_t input_length(const CollectiveCase& c) {
  switch (c.collective) {
    case Collective::reduce_scatter:
    case Collective::all_to_all:
    case Collective::scatter:
      return c.group_size * c.count;
    case Collective::barrier:
      return 0;
    default:
      return c.count;
  }
}

int64_t input_value(const CollectiveCase& c, int rank, int64_t index) {
  if (!is_reducing(c.collective)) return rank * int64_t{100000} + index + 1;  // unique, never 0
  if (c.op == ReduceOp::PRODUCT) return kFactors[(rank * 3 + index * 5 + 1) % 4];
  return (rank * 131 + index * 17 + 7) % 1000 - 500;
}

std::optional<std::vector<int64_t>> expected_output(const CollectiveCase& c, int rank) {
  const int64_t n = c.count;
  const int p = c.group_size;
  std::vector<int64_t> out;
  switch (c.collective) {
    case Collective::all_reduce:
      for (int64_t i = 0; i < n; ++i) out.push_back(folded(c, i));
      return out;
    case Collective::reduce:
      if (rank != c.root) return std::nullopt;
      for (int64_t i = 0; i < n; ++i) out.push_back(folded(c, i));
      return out;
    case Collective::broadcast:
      for (int64_t i = 0; i < n; ++i) out.push_back(input_value(c, c.root, i));
      return out;
    case Collective::all_gather:
      for (int from = 0; from < p; ++from)
        for (int64_t i = 0; i < n; ++i) out.push_back(input_value(c, from, i));
      return out;
    case Collective::reduce_scatter:
      for (int64_t i = 0; i < n; ++i) out.push_back(folded(c, rank * n + i));
      return out;
    case Collective::all_to_all:
      for (int from = 0; from < p; ++from)
        for (int64_t i = 0; i < n; ++i) out.push_back(input_value(c, from, rank * n + i));
      return out;
    case Collective::scatter:
      for (int64_t i = 0; i < n; ++i) out.push_back(input_value(c, c.root, rank * n + i));
      return out;
    case Collective::gather:
      if (rank != c.root) return std::nullopt;
      for (int from = 0; from < p; ++from)
        for (int64_t i = 0; i < n; ++i) out.push_back(input_value(c, from, i));
      return out;
    case Collective::barrier:
      return out;
  }
  return out;
}

}  // namespace tessera::cli::check
