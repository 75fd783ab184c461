// A value an op keeps for its backward (PyTorch: SavedVariable). It remembers the tensor's version
// so that an in-place write between forward and backward is caught instead of giving a wrong
// gradient. An op's own output is saved detached: the node holding it would otherwise be kept
// alive by the very tensor it made.
#pragma once

#include "tessera/tensor.hpp"

namespace tessera::autograd {

class SavedTensor {
 public:
  SavedTensor() = default;
  SavedTensor(const Tensor& t, bool is_output);
  // The saved value; throws naming `node` when it was modified in place since it was saved.
  Tensor unpack(const char* node) const;

 private:
  Tensor value_;
  int64_t version_ = 0;
};

}  // namespace tessera::autograd
