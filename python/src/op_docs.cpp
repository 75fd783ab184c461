// The words for every op operands.hpp binds by name, for Tensor receivers (dense, or local: one
// shard per rank, each computed on its own) and for DTensor receivers (the global tensor).
#include "op_docs.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace tessera::python {
namespace {

using Doc = std::pair<std::string_view, const char*>;

// Said once, after every elementwise and reduction doc below that a local tensor computes per rank.
#define PER_RANK " On a local tensor each rank computes on its own shard."
#define BINARY(what)                                                                                   \
  what ", broadcasting; one side may be a number. Local tensors combine shard by shard on each rank; " \
       "with a DTensor the result is a DTensor."

constexpr Doc kTensorDocs[] = {
    {"add", BINARY("Elementwise sum input + other")},
    {"sub", BINARY("Elementwise difference input - other")},
    {"mul", BINARY("Elementwise product input * other")},
    {"div", BINARY("Elementwise true division input / other (integer inputs give float32)")},
    {"pow", BINARY("Elementwise power input ** other")},
    {"maximum", BINARY("Elementwise larger of input and other")},
    {"minimum", BINARY("Elementwise smaller of input and other")},
    {"eq", BINARY("Elementwise input == other as a bool tensor")},
    {"ne", BINARY("Elementwise input != other as a bool tensor")},
    {"lt", BINARY("Elementwise input < other as a bool tensor")},
    {"le", BINARY("Elementwise input <= other as a bool tensor")},
    {"gt", BINARY("Elementwise input > other as a bool tensor")},
    {"ge", BINARY("Elementwise input >= other as a bool tensor")},
    {"__add__", "self + other (see add)."},
    {"__radd__", "other + self, for a number on the left (see add)."},
    {"__sub__", "self - other (see sub)."},
    {"__rsub__", "other - self, for a number on the left (see sub)."},
    {"__mul__", "self * other (see mul)."},
    {"__rmul__", "other * self, for a number on the left (see mul)."},
    {"__truediv__", "self / other (see div)."},
    {"__rtruediv__", "other / self, for a number on the left (see div)."},
    {"__pow__", "self ** other (see pow)."},
    {"__rpow__", "other ** self, for a number on the left (see pow)."},
    {"__neg__", "-self (see neg)."},
    {"__eq__", "self == other, elementwise (see eq)."},
    {"__ne__", "self != other, elementwise (see ne)."},
    {"__lt__", "self < other, elementwise (see lt)."},
    {"__le__", "self <= other, elementwise (see le)."},
    {"__gt__", "self > other, elementwise (see gt)."},
    {"__ge__", "self >= other, elementwise (see ge)."},
    {"__matmul__", "self @ other (see matmul)."},
    // Reductions: on a local tensor nothing crosses ranks (that is ts.dist.all_reduce's work).
    {"sum",
     "The sum over dim (an int, a sequence of ints, or None for every dim); keepdim keeps reduced dims as "
     "size 1. Integer and bool inputs give int64. On a local tensor each rank sums its own shard."},
    {"mean",
     "The mean over dim (an int, a sequence of ints, or None for every dim); keepdim keeps reduced dims as "
     "size 1." PER_RANK},
    {"prod",
     "The product over dim (an int, a sequence of ints, or None for every dim); keepdim keeps reduced dims "
     "as size 1. Integer and bool inputs give int64." PER_RANK},
    {"all", "Whether every element over dim (None: every dim) is nonzero, as a bool tensor." PER_RANK},
    {"any", "Whether some element over dim (None: every dim) is nonzero, as a bool tensor." PER_RANK},
    {"max",
     "With no dim, the largest element as a 0-d tensor; with dim, the tuple (values, indices) along it, "
     "as PyTorch gives it." PER_RANK},
    {"min",
     "With no dim, the smallest element as a 0-d tensor; with dim, the tuple (values, indices) along it, "
     "as PyTorch gives it." PER_RANK},
    {"argmax",
     "The index of the largest element: into the flattened tensor with no dim, along dim otherwise "
     "(int64)." PER_RANK},
    {"argmin",
     "The index of the smallest element: into the flattened tensor with no dim, along dim otherwise "
     "(int64)." PER_RANK},
    // Elementwise functions.
    {"neg", "Elementwise negation, -x." PER_RANK},
    {"abs", "Elementwise absolute value." PER_RANK},
    {"exp", "Elementwise e ** x (integer inputs give float32)." PER_RANK},
    {"log", "Elementwise natural logarithm (integer inputs give float32)." PER_RANK},
    {"sqrt", "Elementwise square root (integer inputs give float32)." PER_RANK},
    {"relu", "Elementwise max(x, 0)." PER_RANK},
    {"gelu", "Elementwise GELU in its exact erf form, PyTorch's default." PER_RANK},
    {"tanh", "Elementwise hyperbolic tangent." PER_RANK},
    {"sigmoid", "Elementwise logistic function 1 / (1 + e ** -x)." PER_RANK},
    {"softmax", "Softmax along dim: e ** x normalised to sum to 1 along it." PER_RANK},
    {"log_softmax", "The logarithm of softmax along dim, computed stably." PER_RANK},
    // Products and joins (module functions).
    {"matmul", "Matrix product with torch.matmul's rules: 1-d operands and broadcast batch dims." PER_RANK},
    {"mm", "Product of two 2-d matrices." PER_RANK},
    {"bmm", "Batched matrix product of two 3-d tensors with equal batch sizes." PER_RANK},
    {"cat", "Joins tensors along the existing dim `dim`; the others must match." PER_RANK},
    {"stack", "Joins tensors of one shape along a new dim `dim`." PER_RANK},
    // *_like factories.
    {"empty_like",
     "An uninitialised tensor with input's shape, and its dtype and device unless given; a local "
     "input gives a local tensor with each rank's shard shape."},
    {"zeros_like",
     "A tensor of zeros with input's shape, and its dtype and device unless given; a local input "
     "gives a local tensor with each rank's shard shape."},
    {"ones_like",
     "A tensor of ones with input's shape, and its dtype and device unless given; a local input "
     "gives a local tensor with each rank's shard shape."},
    {"full_like",
     "A tensor filled with fill_value with input's shape, and its dtype and device unless given; a "
     "local input gives a local tensor with each rank's shard shape."},
};

// DTensor ops work on the global tensor: each picks its output placements from its inputs' and
// redistributes first (communication, counted by ts.CommCounter) when they fit no rule.
#define GLOBAL " Placements follow the inputs', redistributing first when they fit no rule."
#define KEEPS " Shards and replicas are kept; a Partial placement is reduced first."
#define DBINARY(what)                                                                                    \
  what " of the global tensors, broadcasting; other may be a DTensor, a number or a one-element tensor " \
       "(any plain tensor inside ts.implicit_replication())." GLOBAL
#define DREDUCE(what, partial)                                                                              \
  what " over dim (an int, a sequence of ints, or None for every dim) of the global tensor; keepdim keeps " \
       "reduced dims as size 1. A reduced sharded dim becomes " partial                                     \
       " (a pending reduction across its mesh dim)"

constexpr Doc kDTensorDocs[] = {
    {"add", DBINARY("Elementwise sum self + other")},
    {"sub", DBINARY("Elementwise difference self - other")},
    {"mul", DBINARY("Elementwise product self * other")},
    {"div", DBINARY("Elementwise true division self / other")},
    {"__add__", "self + other (see add)."},
    {"__radd__", "other + self, for a number or tensor on the left (see add)."},
    {"__sub__", "self - other (see sub)."},
    {"__rsub__", "other - self, for a number or tensor on the left (see sub)."},
    {"__mul__", "self * other (see mul)."},
    {"__rmul__", "other * self, for a number or tensor on the left (see mul)."},
    {"__truediv__", "self / other (see div)."},
    {"__rtruediv__", "other / self, for a number or tensor on the left (see div)."},
    {"__neg__", "-self (see neg)."},
    {"sum", DREDUCE("The sum", "Partial(sum)") ", as in PyTorch."},
    {"mean", DREDUCE("The mean", "Partial(avg)") " when every shard holds as many of its elements; uneven "
                                                 "shards are gathered first."},
    {"prod", DREDUCE("The product", "Partial(product)") ", as in PyTorch."},
    {"max", DREDUCE("The largest value",
                    "Partial(max)") ", unless some rank holds none of it: then it is gathered first."},
    {"min", DREDUCE("The smallest value",
                    "Partial(min)") ", unless some rank holds none of it: then it is gathered first."},
    {"neg",
     "Elementwise negation of a DTensor; its placements are kept (a Partial stays pending: negation is "
     "linear)."},
    {"abs", "Elementwise absolute value of a DTensor." KEEPS},
    {"exp", "Elementwise e ** x of a DTensor." KEEPS},
    {"log", "Elementwise natural logarithm of a DTensor." KEEPS},
    {"sqrt", "Elementwise square root of a DTensor." KEEPS},
    {"relu", "Elementwise max(x, 0) of a DTensor." KEEPS},
    {"gelu", "Elementwise GELU (exact erf form) of a DTensor." KEEPS},
    {"tanh", "Elementwise hyperbolic tangent of a DTensor." KEEPS},
    {"sigmoid", "Elementwise logistic function of a DTensor." KEEPS},
    {"softmax",
     "Softmax along dim of the global tensor: dim is made whole on every rank first (gathered when "
     "sharded); other shards stay."},
    {"log_softmax",
     "Log-softmax along dim of the global tensor: dim is made whole on every rank first (gathered "
     "when sharded); other shards stay."},
    {"matmul",
     "Matrix product of two DTensors (torch.matmul's rules) on the global tensors; sharding follows "
     "PyTorch's DTensor rules (e.g. column x row shards give a Partial sum)."},
    {"mm", "Product of two 2-d DTensors on the global tensors; sharding as matmul."},
    {"bmm", "Batched product of two 3-d DTensors on the global tensors; sharding as matmul."},
    {"cat",
     "Joins DTensors of one mesh along the existing dim `dim`, keeping the placements they share; a "
     "mesh dim sharding the joined dim is redistributed first."},
    {"stack", "Joins DTensors of one mesh and shape along a new dim `dim`, keeping their shards."},
    {"empty_like",
     "An uninitialised DTensor laid out like input (mesh, shape, placements; Partial becomes "
     "Replicate), in input's dtype unless given."},
    {"zeros_like",
     "A DTensor of zeros laid out like input (mesh, shape, placements; Partial becomes Replicate), "
     "in input's dtype unless given."},
    {"ones_like",
     "A DTensor of ones laid out like input (mesh, shape, placements; Partial becomes Replicate), in "
     "input's dtype unless given."},
    {"full_like",
     "A DTensor filled with fill_value laid out like input (mesh, shape, placements; Partial becomes "
     "Replicate), in input's dtype unless given."},
};

#undef PER_RANK
#undef BINARY
#undef GLOBAL
#undef KEEPS
#undef DBINARY
#undef DREDUCE

template <size_t N>
const char* find(const Doc (&table)[N], std::string_view name, const char* receiver) {
  for (const auto& [op, doc] : table)
    if (op == name) return doc;
  throw std::logic_error("tessera's Python binding has no docstring for " + std::string(receiver) + " op '" +
                         std::string(name) + "' (python/src/op_docs.cpp)");
}

}  // namespace

const char* tensor_op_doc(std::string_view name) { return find(kTensorDocs, name, "Tensor"); }
const char* dtensor_op_doc(std::string_view name) { return find(kDTensorDocs, name, "DTensor"); }

}  // namespace tessera::python
