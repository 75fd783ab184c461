#include "dispatch/call_needs.hpp"

namespace tessera::dispatch {
namespace {

// For float operands. Integer operands of allclose are cast to float32 first (cast), and printing
// or reading values (item, to_vector) casts to the type it formats or was asked for; a
// non-contiguous tensor is made contiguous with copy before it is read. Collectives move data with
// the backend's copy function, not a kernel, so only their reductions need kernels.
// Reductions: all_reduce, reduce and reduce_scatter alike need the kernel of their op.
const std::vector<CallNeeds> kNeeds = {
    {"printing a tensor (Tensor::to_string, operator<<)", "", {"cast", "copy"}},
    {"to_vector", "", {"cast", "copy"}},
    {"item", "", {}},
    {"ts::equal", "", {"eq", "all"}},
    {"ts::allclose", "", {"sub", "abs", "mul", "add", "le", "eq", "fill", "maximum", "all", "cast"}},
    {"ts::dist::all_reduce", "SUM", {"add"}},
    {"ts::dist::all_reduce", "AVG", {"add", "div", "fill"}},
    {"ts::dist::all_reduce", "PREMUL_SUM", {"add", "mul", "fill"}},
    {"ts::dist::all_reduce", "PRODUCT", {"mul"}},
    {"ts::dist::all_reduce", "MIN", {"minimum"}},
    {"ts::dist::all_reduce", "MAX", {"maximum"}},
    {"ts::dist::all_reduce", "BAND", {"bitwise_and"}},
    {"ts::dist::all_reduce", "BOR", {"bitwise_or"}},
    {"ts::dist::all_reduce", "BXOR", {"bitwise_xor"}},
    {"ts::dist::broadcast", "", {}},
    {"ts::dist::all_gather_into_tensor", "", {}},
    // The transformer ops composed of other kernels (a scalar operand is made with fill).
    {"ts::silu", "", {"sigmoid", "mul"}},
    {"ts::gelu", "tanh", {"mul", "add", "tanh", "fill"}},
    {"ts::rsqrt", "", {"sqrt", "div", "fill"}},
    {"ts::clamp", "", {"ge", "le", "ne", "maximum", "where", "fill"}},
    {"ts::masked_fill", "", {"where", "fill"}},
    {"ts::tril", "", {"arange", "sub", "le", "where", "fill"}},
    {"ts::triu", "", {"arange", "sub", "ge", "where", "fill"}},
    {"ts::layer_norm", "", {"mean", "sub", "mul", "add", "sqrt", "div", "fill"}},
    {"ts::rms_norm", "", {"mul", "mean", "add", "sqrt", "div", "fill"}},
    // A backend with both kernels of a fused pair serves the norm (and its backward) with them
    // instead of the composite above.
    {"ts::layer_norm", "fused", {"layer_norm", "layer_norm_backward"}},
    {"ts::rms_norm", "fused", {"rms_norm", "rms_norm_backward"}},
};

}  // namespace

std::span<const CallNeeds> call_needs() { return kNeeds; }

}  // namespace tessera::dispatch
