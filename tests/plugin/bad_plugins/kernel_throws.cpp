// Defect: the backend's float32 "fill" kernel (bad_plugin.h, valid otherwise) lets a C++ exception
// escape across the C ABI, which the SDK forbids (status.h).
#include <stdexcept>

extern "C" {
#include "bad_plugin.h"
}

namespace {

tessera_status throwing_fill(void*, const tessera_kernel_call*, tessera_error*) {
  throw std::length_error("fill: the scratch buffer is too small");
}

}  // namespace

extern "C" {
BAD_PLUGIN_QUERY("bad-kernel-throws", "a fill kernel that throws", plugin.kernels[0].fn = throwing_fill)
}
