// scaled_dot_product_attention with the dropout mask given: the DTensor form draws the mask of the
// global attention weights itself (so that every placement drops the same weights) and hands each
// rank its part.
#pragma once

#include <optional>

#include "tessera/tensor.hpp"

namespace tessera::detail {

// As scaled_dot_product_attention; when `dropout_mask` is defined (the weights' shape, 0 or
// 1 / (1 - p)) the weights are multiplied by it instead of drawing a dropout of their own.
Tensor attention_with_dropout_mask(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask,
                                   double dropout_p, bool is_causal, std::optional<double> scale,
                                   bool enable_gqa, const Tensor& dropout_mask);

}  // namespace tessera::detail
