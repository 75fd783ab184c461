// Where a tensor's autograd state lives: in its TensorImpl, or for a local tensor in its
// LocalTensorImpl. Here because ranks is the lowest layer that knows both.
#include "autograd/meta.hpp"

#include "tensor/local_tensor_impl.hpp"
#include "tensor/tensor_impl.hpp"

namespace tessera::autograd {

AutogradMeta* meta_of(const Tensor& t) {
  if (t.is_local()) return t.local_impl()->autograd().get();
  return t.defined() ? t.impl()->autograd().get() : nullptr;
}

const std::shared_ptr<AutogradMeta>& ensure_meta(const Tensor& t) {
  return t.is_local() ? t.local_impl()->autograd().ensure() : t.impl()->autograd().ensure();
}

}  // namespace tessera::autograd
