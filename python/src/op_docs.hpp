// The docstrings of the ops that Tensor and DTensor share (operands.hpp defines each op once for
// both, as a method and as a module function), kept in one table (op_docs.cpp) so that the helpers
// that bind an op by name find its words by the same name.
#pragma once

#include <string_view>
#include <type_traits>

#include "bindings.hpp"

namespace tessera::python {

// What op `name` does on a Tensor (a local tensor: per rank) or on a DTensor (the global tensor).
// An op missing from the table is an error at import naming it, so none binds without words.
const char* tensor_op_doc(std::string_view name);
const char* dtensor_op_doc(std::string_view name);

template <class Self>
const char* op_doc(std::string_view name) {
  if constexpr (std::is_same_v<Self, DTensor>)
    return dtensor_op_doc(name);
  else
    return tensor_op_doc(name);
}

}  // namespace tessera::python
