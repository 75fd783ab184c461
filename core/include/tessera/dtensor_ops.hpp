// Operations on DTensors: each picks output placements from its inputs' (sharding propagation,
// SPEC.md section 8), redistributes first when the inputs fit no rule — the cheapest way by the
// mesh topology's cost, logged as implicit communication — and runs the local op on every rank.
#pragma once

#include <vector>

#include "tessera/dtensor.hpp"
#include "tessera/scalar.hpp"

namespace tessera {

DTensor matmul(const DTensor& a, const DTensor& b);
DTensor mm(const DTensor& a, const DTensor& b);
DTensor bmm(const DTensor& a, const DTensor& b);

// Element-wise with broadcasting. A plain tensor operand must have one element (it is treated as
// Replicate) unless implicit replication is on.
DTensor add(const DTensor& a, const DTensor& b);
DTensor sub(const DTensor& a, const DTensor& b);
DTensor mul(const DTensor& a, const DTensor& b);
DTensor div(const DTensor& a, const DTensor& b);
DTensor add(const DTensor& a, const Tensor& b);
DTensor sub(const DTensor& a, const Tensor& b);
DTensor mul(const DTensor& a, const Tensor& b);
DTensor div(const DTensor& a, const Tensor& b);
DTensor add(const DTensor& a, Scalar b);
DTensor sub(const DTensor& a, Scalar b);
DTensor mul(const DTensor& a, Scalar b);
DTensor div(const DTensor& a, Scalar b);
DTensor maximum(const DTensor& a, const DTensor& b);
DTensor minimum(const DTensor& a, const DTensor& b);

DTensor neg(const DTensor& a);
DTensor abs(const DTensor& a);
DTensor relu(const DTensor& a);
DTensor gelu(const DTensor& a);
DTensor exp(const DTensor& a);
DTensor log(const DTensor& a);
DTensor sqrt(const DTensor& a);
DTensor tanh(const DTensor& a);
DTensor sigmoid(const DTensor& a);

DTensor sum(const DTensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
DTensor mean(const DTensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
DTensor max(const DTensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
DTensor min(const DTensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);
DTensor prod(const DTensor& a, const std::vector<int64_t>& dims = {}, bool keepdim = false);

DTensor softmax(const DTensor& a, int64_t dim);
DTensor log_softmax(const DTensor& a, int64_t dim);

DTensor transpose(const DTensor& a, int64_t dim0, int64_t dim1);
DTensor permute(const DTensor& a, const std::vector<int64_t>& dims);
// Keeps shards when the sharded dims survive the reshape (or lead a merge of evenly sharded
// dims); otherwise reshape replicates those mesh dims first and view is an error.
DTensor reshape(const DTensor& a, const Shape& shape);
DTensor view(const DTensor& a, const Shape& shape);

inline DTensor operator+(const DTensor& a, const DTensor& b) { return add(a, b); }
inline DTensor operator-(const DTensor& a, const DTensor& b) { return sub(a, b); }
inline DTensor operator*(const DTensor& a, const DTensor& b) { return mul(a, b); }
inline DTensor operator/(const DTensor& a, const DTensor& b) { return div(a, b); }
inline DTensor operator+(const DTensor& a, const Tensor& b) { return add(a, b); }
inline DTensor operator-(const DTensor& a, const Tensor& b) { return sub(a, b); }
inline DTensor operator*(const DTensor& a, const Tensor& b) { return mul(a, b); }
inline DTensor operator/(const DTensor& a, const Tensor& b) { return div(a, b); }
inline DTensor operator+(const DTensor& a, Scalar b) { return add(a, b); }
inline DTensor operator-(const DTensor& a, Scalar b) { return sub(a, b); }
inline DTensor operator*(const DTensor& a, Scalar b) { return mul(a, b); }
inline DTensor operator/(const DTensor& a, Scalar b) { return div(a, b); }
inline DTensor operator-(const DTensor& a) { return neg(a); }

// While on, a plain multi-element tensor mixed with a DTensor is treated as Replicate (PyTorch:
// implicit_replication()); off by default, when it is an error.
void set_implicit_replication(bool enabled);
bool implicit_replication();

}  // namespace tessera
