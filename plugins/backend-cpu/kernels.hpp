// Each source file of the CPU backend registers its own kernels; plugin.cpp calls them all.
#pragma once

#include "tessera/sdk/cpp/backend_builder.hpp"

namespace tessera::cpu {

void register_binary_kernels(sdk::BackendBuilder& b);     // elementwise_binary.cpp
void register_fold_kernels(sdk::BackendBuilder& b);       // folds.cpp
void register_unary_kernels(sdk::BackendBuilder& b);      // elementwise_unary.cpp
void register_cast_copy_kernels(sdk::BackendBuilder& b);  // cast_copy.cpp
void register_creation_kernels(sdk::BackendBuilder& b);   // creation.cpp
void register_reduction_kernels(sdk::BackendBuilder& b);  // reductions.cpp
void register_linalg_kernels(sdk::BackendBuilder& b);     // linalg.cpp
void register_softmax_kernels(sdk::BackendBuilder& b);    // softmax.cpp
void register_where_kernels(sdk::BackendBuilder& b);      // where.cpp
void register_cumsum_kernels(sdk::BackendBuilder& b);     // cumsum.cpp
void register_indexing_kernels(sdk::BackendBuilder& b);   // indexing.cpp
void register_norm_kernels(sdk::BackendBuilder& b);       // norms.cpp

// How many threads one large matrix product may use (0: as many as the process may run on);
// the backend's set_num_threads. It never changes a product's bits (see linalg.cpp).
void set_product_threads(int32_t num_threads);  // linalg.cpp
// The thread count set_product_threads asks for, resolved (0 becomes the CPUs this process may run
// on); the random kernels share out their chunks over as many.
int product_threads();  // linalg.cpp

}  // namespace tessera::cpu
