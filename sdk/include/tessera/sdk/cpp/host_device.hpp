// TESSERA_SDK_HOST_DEVICE marks SDK helpers that a backend may call from host code and, compiled by
// nvcc, from device code too (the folds of reductions.hpp, the rows of softmax.hpp). Elsewhere it
// is empty.
#pragma once

#if defined(__CUDACC__)
#define TESSERA_SDK_HOST_DEVICE __host__ __device__
#else
#define TESSERA_SDK_HOST_DEVICE
#endif
