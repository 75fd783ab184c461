// Rotary position embeddings on real tensors.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tessera/dtensor.hpp"
#include "tessera/errors.hpp"
#include "tessera/models/transformer.hpp"
#include "tessera/ops.hpp"

namespace tessera::models {
namespace {

// Rotates the pairs of a plain (dense or local) tensor x [batch, seq, heads, head_dim].
Tensor rotate_pairs(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  const int64_t seq = x.size(1);
  const int64_t half = x.size(3) / 2;
  if (seq > cos.size(0))
    throw Error(
        fmt::format("apply_rotary_emb: the sequence has {} positions but the rotary tables cover {} "
                    "(max_seq_len)",
                    seq, cos.size(0)));
  // [seq, 1, half, 1]: broadcast over batch, heads and the pair's two elements.
  const Tensor c = cos.reshape({cos.size(0), 1, half, 1});
  const Tensor s = sin.reshape({sin.size(0), 1, half, 1});
  const Tensor c_rows = split(c, {seq, c.size(0) - seq}, 0)[0];
  const Tensor s_rows = split(s, {seq, s.size(0) - seq}, 0)[0];
  const Tensor pairs = x.reshape({x.size(0), seq, x.size(2), half, 2});
  const std::vector<Tensor> parts = split(pairs, 1, 4);  // the real and imaginary parts
  const Tensor& re = parts[0];
  const Tensor& im = parts[1];
  const Tensor rotated = cat({re * c_rows - im * s_rows, re * s_rows + im * c_rows}, 4);
  return rotated.reshape(x.sizes());
}

}  // namespace

nn::Value apply_rotary_emb(const nn::Value& x, const Tensor& cos, const Tensor& sin) {
  if (x.dim() != 4 || x.size(3) % 2 != 0)
    throw Error(
        fmt::format("apply_rotary_emb: x must be [batch, seq, heads, head_dim] with an even head_dim; "
                    "got a {} of shape [{}]",
                    x.kind(), fmt::join(x.shape(), ", ")));
  if (cos.dim() != 2 || cos.size(1) * 2 != x.size(3) || sin.sizes() != cos.sizes())
    throw Error(
        fmt::format("apply_rotary_emb: the rotary tables must both be [max_seq_len, {}]; got [{}] and [{}]",
                    x.size(3) / 2, fmt::join(cos.sizes(), ", "), fmt::join(sin.sizes(), ", ")));
  if (!x.is_dtensor()) return rotate_pairs(x.tensor(), cos, sin);
  // The rotation of an element depends on its position and its index in head_dim only, so a
  // DTensor sharded on batch or heads (or replicated) rotates its local tensor as it is.
  const DTensor& dx = x.dtensor();
  for (const Placement& placement : dx.placements()) {
    if (placement.is_shard() &&
        (placement.dim() == 1 || placement.dim() == 3 || placement.dim() == -1 || placement.dim() == -3))
      throw Error(
          fmt::format("apply_rotary_emb: x is a {} sharded on the sequence or head_dim dim; gather those "
                      "dims first (the rotation needs each element's global position)",
                      x.kind()));
    if (placement.is_partial())
      throw Error(
          fmt::format("apply_rotary_emb: x is a {} with pending sums; redistribute it first", x.kind()));
  }
  const Tensor& local = dx.to_local();
  const Tensor rotated = rotate_pairs(local, cos, sin);
  return DTensor::from_local(rotated, dx.device_mesh(), dx.placements(), dx.shape());
}

}  // namespace tessera::models
