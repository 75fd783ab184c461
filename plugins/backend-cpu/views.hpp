// Sub-views of a tensor's dims, so that kernels working on "rows" (reductions, softmax) can run
// for_each_offset over the outer dims and again over the inner dims of each row.
#pragma once

#include <dlpack/dlpack.h>

namespace tessera::cpu {

// The first `ndim` dims of t (same data pointer and strides).
inline DLTensor leading_dims(const DLTensor& t, int ndim) {
  DLTensor view = t;
  view.ndim = ndim;
  return view;
}

// The last `ndim` dims of t; offsets computed in it are relative to a row's first element.
inline DLTensor trailing_dims(const DLTensor& t, int ndim) {
  DLTensor view = t;
  view.ndim = ndim;
  if (t.ndim > 0) {
    view.shape = t.shape + (t.ndim - ndim);
    view.strides = t.strides + (t.ndim - ndim);
  }
  return view;
}

}  // namespace tessera::cpu
