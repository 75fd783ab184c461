// The range check of index values that embedding and its DTensor form share.
#pragma once

#include "tessera/tensor.hpp"

namespace tessera::detail {

// Every value of `indices` (dense or local; per rank) is in [0, size): else an Error naming `op`,
// the offending value and `size` as a vocabulary of `size` rows. Reads the values (two reductions
// per rank); a tensor on a shapes-only backend holds none and passes.
void check_embedding_indices(const Tensor& indices, int64_t size, const char* op);
// The same for class-index targets: values in [0, classes) or equal to ignore_index.
void check_class_targets(const Tensor& target, int64_t classes, int64_t ignore_index, const char* op);

}  // namespace tessera::detail
