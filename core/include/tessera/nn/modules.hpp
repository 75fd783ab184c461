// The built-in modules (PyTorch: torch.nn; spelled as libtorch's C++ frontend): Linear, Embedding,
// LayerNorm, RMSNorm, Dropout, and the containers Sequential and ModuleList. Each is an *Impl
// class with a holder of the plain name (`ts::nn::Linear lin(ts::nn::LinearOptions(4, 8))`,
// `lin->weight`, `lin(x)`). Parameters start as PyTorch's reset_parameters() makes them, drawn
// from the default generator (ts::manual_seed makes them reproducible).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/nn/module.hpp"

// An option with a chainable setter and a getter (libtorch: TORCH_ARG).
#define TESSERA_ARG(T, name)                               \
 public:                                                   \
  auto name(const T& new_value)->decltype(*this) {         \
    this->name##_ = new_value;                             \
    return *this;                                          \
  }                                                        \
  const T& name() const noexcept { return this->name##_; } \
                                                           \
 private:                                                  \
  T name##_

namespace tessera::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  TESSERA_ARG(int64_t, in_features);
  TESSERA_ARG(int64_t, out_features);
  TESSERA_ARG(bool, bias) = true;
  TESSERA_ARG(DType, dtype) = kFloat32;
  TESSERA_ARG(std::string, backend);  // "": the default backend ("meta": shapes only)
};

// y = x W^T + b with W [out_features, in_features], initialised U(-k, k), k = 1/sqrt(in_features).
class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features)
      : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);
  Value forward(const Value& x);
  std::string extra_repr() const override;

  LinearOptions options;
  Parameter weight;
  Parameter bias;  // undefined with bias(false)
};
TESSERA_MODULE(Linear);

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  TESSERA_ARG(int64_t, num_embeddings);
  TESSERA_ARG(int64_t, embedding_dim);
  TESSERA_ARG(DType, dtype) = kFloat32;
  TESSERA_ARG(std::string, backend);  // "": the default backend ("meta": shapes only)
};

// A lookup table [num_embeddings, embedding_dim], initialised N(0, 1).
class EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  Value forward(const Value& indices);
  std::string extra_repr() const override;

  EmbeddingOptions options;
  Parameter weight;
};
TESSERA_MODULE(Embedding);

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  TESSERA_ARG(std::vector<int64_t>, normalized_shape);
  TESSERA_ARG(double, eps) = 1e-5;
  TESSERA_ARG(bool, elementwise_affine) = true;
  TESSERA_ARG(bool, bias) = true;
  TESSERA_ARG(DType, dtype) = kFloat32;
  TESSERA_ARG(std::string, backend);  // "": the default backend ("meta": shapes only)
};

class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(const LayerNormOptions& options);
  Value forward(const Value& x);
  std::string extra_repr() const override;

  LayerNormOptions options;
  Parameter weight;  // ones; undefined without elementwise_affine
  Parameter bias;    // zeros; undefined without elementwise_affine or bias
};
TESSERA_MODULE(LayerNorm);

struct RMSNormOptions {
  RMSNormOptions(std::vector<int64_t> normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  TESSERA_ARG(std::vector<int64_t>, normalized_shape);
  TESSERA_ARG(std::optional<double>, eps);  // none: the machine epsilon of the input's dtype
  TESSERA_ARG(bool, elementwise_affine) = true;
  TESSERA_ARG(DType, dtype) = kFloat32;
  TESSERA_ARG(std::string, backend);  // "": the default backend ("meta": shapes only)
};

class RMSNormImpl : public Module {
 public:
  explicit RMSNormImpl(const RMSNormOptions& options);
  Value forward(const Value& x);
  std::string extra_repr() const override;

  RMSNormOptions options;
  Parameter weight;  // ones; undefined without elementwise_affine
};
TESSERA_MODULE(RMSNorm);

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT
  TESSERA_ARG(double, p);
};

// Zeroes elements with probability p in training mode and scales the rest by 1/(1-p); the
// identity in eval mode.
class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(const DropoutOptions& options = {});
  Value forward(const Value& x);
  std::string extra_repr() const override;

  DropoutOptions options;
};
TESSERA_MODULE(Dropout);

// max(x, 0) elementwise (PyTorch: nn.ReLU); no parameters.
class ReLUImpl : public Module {
 public:
  ReLUImpl() : Module("ReLU") {}
  Value forward(const Value& x);
};
TESSERA_MODULE(ReLU);

// Modules called one after another (each's forward takes and returns one Value); children are
// named "0", "1", ...
class SequentialImpl : public Module {
 public:
  SequentialImpl() : Module("Sequential") {}
  // Not a copy or move constructor (modules are not copyable): without the constraint, traits such
  // as std::is_move_constructible would wrongly say yes.
  template <class... Modules>
  requires(!(std::is_same_v<std::remove_cvref_t<Modules>, SequentialImpl> ||
             ...)) explicit SequentialImpl(Modules&&... modules)
      : Module("Sequential") {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  template <class M>
  void push_back(M module) {
    auto impl = pointer_of(module);
    add(impl, [impl](const Value& x) { return Value(impl->forward(x)); });
  }
  Value forward(const Value& x);
  size_t size() const { return steps_.size(); }

 private:
  template <class M>
  static auto pointer_of(const M& module) {
    if constexpr (requires { module.ptr(); }) {
      return module.ptr();
    } else {
      return module;  // a std::shared_ptr to a module
    }
  }
  void add(std::shared_ptr<Module> module, std::function<Value(const Value&)> step);

  std::vector<std::function<Value(const Value&)>> steps_;
};
TESSERA_MODULE(Sequential);

// A list of submodules named "0", "1", ... (PyTorch: nn.ModuleList); it has no forward.
class ModuleListImpl : public Module {
 public:
  ModuleListImpl() : Module("ModuleList") {}
  template <class M>
  void push_back(M module) {
    if constexpr (requires { module.ptr(); }) {
      append(module.ptr());
    } else {
      append(std::shared_ptr<Module>(module));
    }
  }
  size_t size() const { return items_.size(); }
  std::shared_ptr<Module> operator[](size_t index) const;
  template <class M>
  std::shared_ptr<M> at(size_t index) const {
    auto typed = std::dynamic_pointer_cast<M>((*this)[index]);
    if (!typed) throw_wrong_type(index);
    return typed;
  }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  void append(std::shared_ptr<Module> module);
  [[noreturn]] void throw_wrong_type(size_t index) const;

  std::vector<std::shared_ptr<Module>> items_;
};
TESSERA_MODULE(ModuleList);

}  // namespace tessera::nn
