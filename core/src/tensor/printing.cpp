// Readable printing in PyTorch's style: tensor([[1., 2.], [3., 4.]]) with a dtype suffix when it is
// not the default for its kind.
#include <cmath>
#include <ostream>
#include <sstream>

#include <fmt/format.h>

#include "dispatch/user_call.hpp"
#include "tensor/remote_ranks.hpp"
#include "tensor/internal.hpp"

namespace tessera {
namespace {

std::vector<std::string> element_texts(const TensorImpl& t) {
  std::vector<std::string> texts;
  if (t.dtype() == kBool) {
    for (bool v : detail::read_values<bool>(t, "printing")) texts.emplace_back(v ? "True" : "False");
  } else if (!is_floating(t.dtype())) {
    for (int64_t v : detail::read_values<int64_t>(t, "printing")) texts.push_back(std::to_string(v));
  } else {
    const std::vector<double> values = detail::read_values<double>(t, "printing");
    bool all_integral = true;
    for (double v : values) all_integral = all_integral && (!std::isfinite(v) || v == std::floor(v));
    for (double v : values) {
      if (std::isnan(v))
        texts.emplace_back("nan");
      else if (std::isinf(v))
        texts.emplace_back(v > 0 ? "inf" : "-inf");
      else
        texts.push_back(all_integral ? fmt::format("{:.0f}.", v) : fmt::format("{:.4f}", v));
    }
  }
  // Right-align to a common width so rows line up.
  size_t width = 0;
  for (const auto& s : texts) width = std::max(width, s.size());
  for (auto& s : texts) s.insert(0, width - s.size(), ' ');
  return texts;
}

void render(std::ostringstream& out, const Shape& sizes, size_t dim, const std::vector<std::string>& texts,
            size_t& next, size_t indent) {
  if (dim == sizes.size()) {
    out << texts[next++];
    return;
  }
  out << '[';
  for (int64_t i = 0; i < sizes[dim]; ++i) {
    if (i > 0) {
      out << ',';
      if (dim + 1 == sizes.size()) {
        out << ' ';
      } else {
        out << std::string(sizes.size() - dim - 1, '\n') << std::string(indent + dim + 1, ' ');
      }
    }
    render(out, sizes, dim + 1, texts, next, indent);
  }
  out << ']';
}

}  // namespace

std::string Tensor::to_string() const {
  if (!defined()) return "tensor(undefined)";
  const dispatch::UserCall call("printing a tensor (Tensor::to_string, operator<<)");
  if (is_local()) {
    // Every rank in rank order, each shard printed as a plain tensor.
    std::string text = "LocalTensor(";
    for (const auto& [rank, shard] : shards()) {
      std::string body = shard.to_string();
      const std::string indent(std::to_string(rank).size() + 4, ' ');
      for (size_t at = body.find('\n'); at != std::string::npos; at = body.find('\n', at + 1))
        body.insert(at + 1, indent);
      text += fmt::format("\n  {}: {}", rank, body);
    }
    if (const int elsewhere = detail::ranks_elsewhere(); elsewhere > 0)
      text += fmt::format("\n  ({} more rank(s) hosted by other processes)", elsewhere);
    return text + ")";
  }
  const TensorImpl& self = *impl_;
  std::ostringstream out;
  out << "tensor(";
  const std::vector<std::string> texts = element_texts(self);
  size_t next = 0;
  render(out, self.sizes(), 0, texts, next, 7);
  if (self.numel() == 0) out << ", size=" << shape_text(self.sizes());
  if (self.dtype() != kFloat32 && self.dtype() != kInt64 && self.dtype() != kBool)
    out << ", dtype=" << dtype_name(self.dtype());
  if (self.backend().name() != "cpu") out << ", backend='" << self.backend().name() << "'";
  out << ')';
  return out.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

}  // namespace tessera
