// Each source file of the CUDA backend registers its own kernels; plugin.cpp calls them all.
#pragma once

#include "tessera/sdk/cpp/backend_builder.hpp"

namespace tessera::cuda {

void register_binary_kernels(sdk::BackendBuilder& b);     // elementwise_binary.cu
void register_unary_kernels(sdk::BackendBuilder& b);      // elementwise_unary.cu
void register_cast_copy_kernels(sdk::BackendBuilder& b);  // cast_copy.cu
void register_creation_kernels(sdk::BackendBuilder& b);   // creation.cu
void register_reduction_kernels(sdk::BackendBuilder& b);  // reductions.cu
void register_linalg_kernels(sdk::BackendBuilder& b);     // linalg.cu
void register_softmax_kernels(sdk::BackendBuilder& b);    // softmax.cu
void register_where_kernels(sdk::BackendBuilder& b);      // where.cu
void register_cumsum_kernels(sdk::BackendBuilder& b);     // cumsum.cu
void register_indexing_kernels(sdk::BackendBuilder& b);   // indexing.cu
void register_norm_kernels(sdk::BackendBuilder& b);       // norms.cu

}  // namespace tessera::cuda
