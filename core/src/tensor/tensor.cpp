// Tensor's accessors, copies and element access.
#include <fmt/format.h>

#include <algorithm>

#include "autograd/derivatives.hpp"
#include "autograd/record.hpp"
#include "dispatch/backends.hpp"
#include "dispatch/user_call.hpp"
#include "tensor/internal.hpp"
#include "tensor/local_tensor_impl.hpp"
#include "tensor/remote_ranks.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/detail/spmd_fresh.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace detail {

void throw_not_dense(const Tensor& t, const char* op) {
  if (!t.defined()) throw Error(fmt::format("{}: the tensor is undefined (default-constructed)", op));
  throw Error(fmt::format("internal: {} reached the dense path with a local tensor", op));
}

Tensor empty_on(Shape sizes, DType dtype, std::shared_ptr<const dispatch::Backend> backend) {
  return Tensor(TensorImpl::allocate(std::move(sizes), dtype, std::move(backend)));
}

Tensor empty_like_on(const TensorImpl& like, Shape sizes, DType dtype) {
  return empty_on(std::move(sizes), dtype, like.backend_ptr());
}

std::shared_ptr<const dispatch::Backend> backend_for(const TensorOptions& options) {
  return options.backend_name.empty() ? dispatch::default_backend() : dispatch::backend(options.backend_name);
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const size_t ndim = std::max(a.size(), b.size());
  Shape out(ndim);
  for (size_t i = 0; i < ndim; ++i) {
    const int64_t da = i < ndim - a.size() ? 1 : a[i - (ndim - a.size())];
    const int64_t db = i < ndim - b.size() ? 1 : b[i - (ndim - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error(
          fmt::format("{}: shapes {} and {} cannot be broadcast together (dim {}: {} vs {}; sizes must "
                      "match or one must be 1)",
                      op, shape_text(a), shape_text(b), i, da, db));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void broadcast_strides(const TensorImpl& t, const Shape& target, int64_t* strides) {
  const size_t lead = target.size() - t.sizes().size();
  std::fill(strides, strides + lead, 0);
  for (size_t i = 0; i < t.sizes().size(); ++i)
    strides[lead + i] = t.sizes()[i] == 1 && target[lead + i] != 1 ? 0 : t.strides()[i];
}

std::vector<int64_t> broadcast_strides(const TensorImpl& t, const Shape& target) {
  std::vector<int64_t> strides(target.size());
  broadcast_strides(t, target, strides.data());
  return strides;
}

void fill_dense(const TensorImpl& t, const Scalar& value) {
  const dispatch::Attr attr = is_floating(t.dtype()) ? dispatch::Attr::real("value", value.to_double())
                                                     : dispatch::Attr::integer("value", value.to_int());
  dispatch::call_kernel("fill", t.dtype(), {}, {dispatch::operand(t)}, {attr});
}

void copy_into(const TensorImpl& dst, const TensorImpl& src) {
  const Shape shape = broadcast_shapes(src.sizes(), dst.sizes(), "copy_");
  if (shape != dst.sizes())
    throw Error(fmt::format("copy_: source shape {} does not broadcast to destination shape {}",
                            shape_text(src.sizes()), shape_text(dst.sizes())));
  if (src.storage() == dst.storage()) {
    // Kernels read and write in one pass; overlapping views (a[1:] = a[:-1]) go through a copy.
    const Tensor staged = Tensor(std::make_shared<TensorImpl>(src)).clone();
    return copy_into(dst, *staged.impl());
  }
  const std::vector<int64_t> src_strides = broadcast_strides(src, dst.sizes());
  const bool same_dtype = src.dtype() == dst.dtype();
  dispatch::call_kernel(same_dtype ? "copy" : "cast", src.dtype(),
                        {dispatch::operand(src, dst.sizes(), src_strides)}, {dispatch::operand(dst)});
}

namespace {

// Whether dst's and src's Storages may trade or share bytes wholesale: two dense tensors of one
// dtype, element count and backend, each contiguous over the whole of its own Storage.
bool whole_storages(const Tensor& dst, const Tensor& src) {
  if (!dst.defined() || !src.defined() || dst.is_local() || src.is_local()) return false;
  const TensorImpl& d = *dst.impl();
  const TensorImpl& s = *src.impl();
  auto spans_storage = [](const TensorImpl& t) {
    return t.is_contiguous() && t.offset() == 0 &&
           static_cast<size_t>(t.numel()) * itemsize(t.dtype()) == t.storage()->bytes;
  };
  return d.dtype() == s.dtype() && d.numel() == s.numel() && &d.backend() == &s.backend() &&
         d.storage() != s.storage() && spans_storage(d) && spans_storage(s);
}

}  // namespace

bool share_storage(const Tensor& dst, const Tensor& src) {
  return whole_storages(dst, src) && dst.impl()->storage()->share_bytes_of(*src.impl()->storage());
}

bool exchange_storage(const Tensor& dst, const Tensor& src) {
  // Trading the bytes (and who owns them) leaves any other Storage that shared dst's old bytes as
  // it was: shared replicas stay unaffected.
  return whole_storages(dst, src) && dst.impl()->storage()->exchange_bytes_with(*src.impl()->storage());
}

template <class T>
std::vector<T> read_values(const TensorImpl& t, const char* op) {
  const dispatch::UserCall call(op);
  if (t.backend().shapes_only())
    throw Error(
        fmt::format("{}: values of a tensor on the {} backend cannot be read: it holds shapes only (a {} "
                    "tensor of shape {}); read values of a tensor on a computing backend such as cpu",
                    op, t.backend().name(), dtype_name(t.dtype()), shape_text(t.sizes())));
  Tensor converted = Tensor(std::make_shared<TensorImpl>(t)).to(dtype_of<T>()).contiguous();
  const TensorImpl& c = *converted.impl();
  std::vector<T> values(static_cast<size_t>(c.numel()));
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.size());
    c.backend().copy(bytes.data(), c.bytes_at(), bytes.size(), TESSERA_COPY_DEVICE_TO_HOST);
    for (size_t i = 0; i < bytes.size(); ++i) values[i] = bytes[i] != 0;
  } else {
    c.backend().copy(values.data(), c.bytes_at(), values.size() * sizeof(T), TESSERA_COPY_DEVICE_TO_HOST);
  }
  return values;
}

template std::vector<bool> read_values<bool>(const TensorImpl&, const char*);
template std::vector<int32_t> read_values<int32_t>(const TensorImpl&, const char*);
template std::vector<int64_t> read_values<int64_t>(const TensorImpl&, const char*);
template std::vector<float> read_values<float>(const TensorImpl&, const char*);
template std::vector<double> read_values<double>(const TensorImpl&, const char*);
template std::vector<int8_t> read_values<int8_t>(const TensorImpl&, const char*);
template std::vector<uint8_t> read_values<uint8_t>(const TensorImpl&, const char*);

}  // namespace detail

using detail::impl_of;

Tensor::Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
Tensor::Tensor(std::shared_ptr<const LocalTensorImpl> local) : local_(std::move(local)) {}

const TensorImpl& Tensor::checked() const { return impl_of(*this, "tensor"); }

const LocalTensorImpl& Tensor::checked_local(const char* op) const {
  if (!local_)
    throw Error(fmt::format("{}: the tensor is {}, not a local tensor", op,
                            defined() ? "a plain tensor" : "undefined"));
  return *local_;
}

DType Tensor::dtype() const { return local_ ? local_->dtype() : checked().dtype(); }
int64_t Tensor::dim() const { return local_ ? local_->dim() : checked().dim(); }

SymShape Tensor::shape() const { return local_ ? local_->shape() : SymShape(checked().sizes()); }

SymInt Tensor::sym_size(int64_t d) const {
  // normalize_dim accepts dim 0 of a 0-d tensor (as a dim argument of transpose, flip, ...), but
  // there is no size to return for it.
  if (dim() == 0)
    throw Error(fmt::format("sym_size: cannot take dim {} of a 0-d tensor, which has no dims", d));
  return shape()[static_cast<size_t>(normalize_dim(d, dim(), "sym_size"))];
}

const Shape& Tensor::sizes() const {
  if (!local_) return checked().sizes();
  if (!local_->uniform_sizes())
    throw Error(
        fmt::format("sizes(): the shards' shapes differ per rank ({}); use shape() for per-rank sizes",
                    local_->shape().to_string()));
  return *local_->uniform_sizes();
}

int64_t Tensor::size(int64_t d) const {
  if (dim() == 0) throw Error(fmt::format("size: cannot take dim {} of a 0-d tensor, which has no dims", d));
  const size_t at = static_cast<size_t>(normalize_dim(d, dim(), "size"));
  if (!local_) return sizes()[at];
  // A local tensor's dim has one size when every shard agrees on it, even if other dims differ.
  const SymInt size = shape()[at];
  if (size.is_local())
    throw Error(
        fmt::format("size({}): the shards' sizes differ per rank along dim {} ({}); use sym_size({}) or "
                    "shape() for per-rank sizes",
                    d, at, size.to_string(), d));
  return size.as_int();
}

const std::vector<int64_t>& Tensor::strides() const {
  if (local_) throw Error("strides(): a local tensor has per-rank strides; use shard(rank).strides()");
  return checked().strides();
}

int64_t Tensor::numel() const { return local_ ? shape_numel(sizes()) : checked().numel(); }

bool Tensor::is_contiguous() const {
  if (!local_) return checked().is_contiguous();
  for (const auto& [rank, shard] : local_->shards())
    if (!shard.is_contiguous()) return false;
  return true;
}

const std::string& Tensor::backend() const {
  return local_ ? local_->first().backend() : checked().backend().name();
}

RankSet Tensor::ranks() const { return checked_local("ranks").ranks(); }

Tensor Tensor::shard(int rank) const {
  const LocalTensorImpl& local = checked_local("shard");
  if (!local.shards().contains(rank)) {
    if (const int process = detail::remote_process_of(rank); process >= 0)
      throw Error(
          fmt::format("shard({}): rank {} is hosted by process {}, not this one; this process holds ranks {}",
                      rank, rank, process, local.ranks().to_string()));
    throw Error(fmt::format("local tensor has no shard for rank {} (its ranks are {})", rank,
                            local.ranks().to_string()));
  }
  return local.shards().at(rank);
}

const RankMap<Tensor>& Tensor::shards() const { return checked_local("shards").shards(); }

Tensor Tensor::contiguous() const {
  auto forward = [&] {
    if (local_)
      return detail::spmd_fresh(
          "contiguous", [](const Tensor& s) { return s.contiguous(); }, *this);
    return is_contiguous() ? *this : clone();
  };
  // A tensor that is already contiguous is returned as it is (record() leaves it alone).
  return autograd::differentiable(
      forward, [&](const Tensor& out) { autograd::record_identity("CloneBackward", *this, out); }, *this);
}

Tensor Tensor::clone() const {
  auto forward = [&] {
    if (local_)
      return detail::spmd_pure(
          "clone", [](const Tensor& s) { return s.clone(); }, *this);
    const TensorImpl& self = impl_of(*this, "clone");
    Tensor out = detail::empty_like_on(self, self.sizes(), self.dtype());
    dispatch::call_kernel("copy", self.dtype(), {dispatch::operand(self)}, {dispatch::operand(*out.impl())});
    return out;
  };
  return autograd::differentiable(
      forward, [&](const Tensor& out) { autograd::record_identity("CloneBackward", *this, out); }, *this);
}

Tensor Tensor::to(DType dtype) const {
  auto forward = [&] {
    if (local_)
      return detail::spmd_fresh(
          "to", [dtype](const Tensor& s) { return s.to(dtype); }, *this);
    const TensorImpl& self = impl_of(*this, "to");
    if (self.dtype() == dtype) return *this;
    Tensor out = detail::empty_like_on(self, self.sizes(), dtype);
    dispatch::call_kernel("cast", self.dtype(), {dispatch::operand(self)}, {dispatch::operand(*out.impl())});
    return out;
  };
  // A cast to a dtype without gradients (an integer or bool) is not recorded.
  if (!is_floating(dtype)) return forward();
  return autograd::differentiable(
      forward, [&](const Tensor& out) { autograd::record_identity("ToCopyBackward", *this, out); }, *this);
}

Tensor& Tensor::copy_(const Tensor& src) {
  autograd::check_inplace(*this, "copy_", "use the source (or a clone() of it) as a new tensor instead");
  if (!local_ && src.is_local())
    throw Error(
        "copy_: cannot copy a local tensor into a plain tensor; reconcile() it or copy into a local tensor");
  if (local_) {
    detail::spmd(
        "copy_", [](Tensor dst, const Tensor& s) { dst.copy_(s); }, *this, src);
    return *this;
  }
  detail::copy_into(impl_of(*this, "copy_"), impl_of(src, "copy_"));
  return *this;
}

Tensor& Tensor::fill_(Scalar value) {
  autograd::check_inplace(*this, "fill_", "use full_like() for a new tensor instead");
  if (local_ || value.is_local()) {
    if (!local_) throw Error("fill_: a per-rank value can only fill a local tensor, not a plain one");
    detail::spmd(
        "fill_", [](Tensor dst, const Scalar& v) { dst.fill_(v); }, *this, value);
    return *this;
  }
  const TensorImpl& self = impl_of(*this, "fill_");
  // fill writes contiguous outputs only; fill a temporary and copy it in for strided views.
  Tensor filled = self.is_contiguous() ? *this : detail::empty_like_on(self, self.sizes(), self.dtype());
  detail::fill_dense(*filled.impl(), value);
  if (filled.impl() != impl_) copy_(filled);
  return *this;
}

const void* Tensor::data_ptr() const {
  const TensorImpl& self = detail::impl_of(*this, "data_ptr");
  if (self.backend().shapes_only()) return nullptr;  // no bytes: no address to hand out
  // The address is handed out: the Storage gets bytes of its own and keeps them from now on
  // (Storage, "Exposure"), so the pointer names this tensor's bytes for as long as it lives.
  self.storage()->expose_writable();
  return self.bytes_at();
}

const void* Tensor::current_address() const { return detail::impl_of(*this, "current_address").bytes_at(); }

Scalar Tensor::item() const {
  if (local_)
    return detail::spmd(
        "item", [](const Tensor& s) { return s.item(); }, *this);
  const TensorImpl& self = impl_of(*this, "item");
  if (self.numel() != 1)
    throw Error(fmt::format("item: the tensor has {} elements (shape {}); expected exactly 1", self.numel(),
                            shape_text(self.sizes())));
  switch (self.dtype()) {
    case DType::Bool:
      return Scalar(detail::read_values<bool>(self, "item")[0]);
    case DType::Int32:
      return Scalar(detail::read_values<int32_t>(self, "item")[0]);
    case DType::Int64:
      return Scalar(detail::read_values<int64_t>(self, "item")[0]);
    case DType::Float32:
      return Scalar(detail::read_values<float>(self, "item")[0]);
    case DType::Float64:
      return Scalar(detail::read_values<double>(self, "item")[0]);
    // float32 and int64 hold every value of these exactly.
    case DType::BFloat16:
    case DType::Float16:
      return Scalar(detail::read_values<float>(self, "item")[0]);
    case DType::Int8:
    case DType::UInt8:
      return Scalar(detail::read_values<int64_t>(self, "item")[0]);
  }
  return Scalar();
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  if (local_) return reconcile().to_vector<T>();
  return detail::read_values<T>(impl_of(*this, "to_vector"), "to_vector");
}
template std::vector<bool> Tensor::to_vector<bool>() const;
template std::vector<int32_t> Tensor::to_vector<int32_t>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<int8_t> Tensor::to_vector<int8_t>() const;
template std::vector<uint8_t> Tensor::to_vector<uint8_t>() const;

Tensor Tensor::sum() const { return tessera::sum(*this); }
Tensor Tensor::sum(const std::vector<int64_t>& dims, bool keepdim) const {
  return tessera::sum(*this, dims, keepdim);
}
Tensor Tensor::mean() const { return tessera::mean(*this); }
Tensor Tensor::mean(const std::vector<int64_t>& dims, bool keepdim) const {
  return tessera::mean(*this, dims, keepdim);
}
Tensor Tensor::max() const { return tessera::max(*this); }
Tensor Tensor::min() const { return tessera::min(*this); }
Tensor Tensor::matmul(const Tensor& other) const { return tessera::matmul(*this, other); }
Tensor Tensor::softmax(int64_t d) const { return tessera::softmax(*this, d); }

}  // namespace tessera
