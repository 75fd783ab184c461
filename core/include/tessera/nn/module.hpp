// ts::nn::Module (PyTorch: torch.nn.Module; spelled as libtorch's C++ frontend): a tree of modules
// that owns named parameters and buffers. Names are dotted paths from the root
// ("layers.0.attention.wq.weight"), in registration order, as PyTorch's named_parameters().
//
// A module's forward takes and returns nn::Value (Tensor or DTensor). Built-in modules run their
// forward through run_forward(), which applies the forward hooks that parallel styles and FSDP
// install: a pre-hook may replace the inputs (e.g. wrap a local tensor as a DTensor), a hook may
// replace the output (e.g. redistribute it and return its local tensor). User modules do the same
// to be parallelizable.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/dtype.hpp"
#include "tessera/nn/parameter.hpp"
#include "tessera/nn/value.hpp"

namespace tessera::nn {

// Names and values in order (PyTorch: an OrderedDict). A state dict's values are the parameters'
// and persistent buffers' current values: Tensors, or DTensors for parallelized parameters.
class StateDict {
 public:
  void insert(std::string name, Value value);  // an existing name is an error
  bool contains(const std::string& name) const;
  const Value& at(const std::string& name) const;  // an unknown name is an error naming it
  std::vector<std::string> keys() const;
  size_t size() const { return items_.size(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<std::pair<std::string, Value>> items_;
};

// What a non-strict load_state_dict left out (PyTorch: _IncompatibleKeys).
struct LoadStateDictResult {
  std::vector<std::string> missing_keys;     // the module's names the dict lacks
  std::vector<std::string> unexpected_keys;  // the dict's names the module lacks
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  // Hooks around a module's forward (PyTorch: register_forward_pre_hook / register_forward_hook).
  using ForwardPreHook = std::function<void(Module& module, std::vector<Value>& inputs)>;
  using ForwardHook = std::function<void(Module& module, const std::vector<Value>& inputs, Value& output)>;

  explicit Module(std::string name = "Module");
  virtual ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The module's type name, e.g. "Linear" (libtorch: name()).
  const std::string& name() const { return name_; }

  std::vector<Parameter> parameters(bool recurse = true) const;
  std::vector<std::pair<std::string, Parameter>> named_parameters(bool recurse = true) const;
  std::vector<std::pair<std::string, Tensor>> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const;
  // Every module in the tree, this one first (named ""), then depth-first in registration order.
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules();
  std::vector<std::shared_ptr<Module>> modules();
  // The module at a dotted path ("layers.0.attention"); "" is this one. Unknown names are an error.
  std::shared_ptr<Module> get_submodule(const std::string& path);
  // The parameter at a dotted path ("layers.0.attention.wq.weight").
  Parameter get_parameter(const std::string& path) const;

  // Parameters and persistent buffers by dotted name.
  StateDict state_dict() const;
  // Copies the values into the parameters and buffers (in place: their bytes keep their identity).
  // A DTensor parameter takes a DTensor (redistributed to its placements if they differ) or a full
  // Tensor (its shard is taken). strict: a missing or unexpected key is an error naming them all.
  LoadStateDictResult load_state_dict(const StateDict& state, bool strict = true);

  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  void zero_grad(bool set_to_none = true);
  // Casts every floating-point parameter and buffer (PyTorch: module.to(dtype)); parameters keep
  // their slots, so handles taken before see the cast values; requires_grad is kept.
  void to(DType dtype);
  // fn on every module of the tree, children first, then this one (PyTorch's order).
  void apply(const std::function<void(Module&)>& fn);

  // Returns a handle to the registered slot. requires_grad=true marks a floating-point tensor as
  // requiring gradients. Names must be non-empty, without '.', and unique within the module.
  Parameter register_parameter(std::string name, Parameter parameter, bool requires_grad = true);
  Tensor register_buffer(std::string name, Tensor buffer, bool persistent = true);
  // `name` is moved into add_child; clang-tidy misreads the call, which depends on M, as a const use.
  template <class M>
  std::shared_ptr<M> register_module(std::string name,  // NOLINT(performance-unnecessary-value-param)
                                     std::shared_ptr<M> module) {
    add_child(std::move(name), module);
    return module;
  }
  template <class Holder, class = typename Holder::ContainedType>
  Holder register_module(std::string name, Holder holder) {  // NOLINT(performance-unnecessary-value-param)
    add_child(std::move(name), holder.ptr());
    return holder;
  }
  // Replaces a registered submodule (e.g. a wrapper around it); the name must exist.
  void replace_module(const std::string& name, std::shared_ptr<Module> module);

  // Hooks run in registration order; the returned id removes one.
  int64_t register_forward_pre_hook(ForwardPreHook hook);
  int64_t register_forward_hook(ForwardHook hook);
  void remove_hook(int64_t id);

  // State a wrapper keeps on the module it wraps (FSDP's parameter group, DDP's buckets), found by
  // key; attaching to a key that is taken replaces it.
  struct Extension {
    virtual ~Extension() = default;
  };
  void attach(const std::string& key, std::shared_ptr<Extension> extension);
  std::shared_ptr<Extension> attached(const std::string& key) const;  // null when none

  // What `std::cout << module` prints: the tree with each module's extra_repr().
  std::string to_string() const;
  virtual std::string extra_repr() const { return ""; }

 protected:
  // Runs body on the inputs after the pre-hooks, then the hooks on its output.
  Value run_forward(std::vector<Value> inputs, const std::function<Value(const std::vector<Value>&)>& body);

 private:
  void add_child(std::string name, std::shared_ptr<Module> module);
  void check_new_name(const std::string& name, const char* what) const;
  void collect_parameters(const std::string& prefix, bool recurse,
                          std::vector<std::pair<std::string, Parameter>>& out) const;
  void collect_modules(const std::string& prefix,
                       std::vector<std::pair<std::string, std::shared_ptr<Module>>>& out);
  void print(std::string& out, const std::string& indent) const;

  struct Buffer {
    std::string name;
    Tensor value;
    bool persistent;
  };
  struct Hook {
    int64_t id;
    ForwardPreHook pre;
    ForwardHook post;
  };

  std::string name_;
  bool training_ = true;
  std::vector<std::pair<std::string, Parameter>> parameters_;
  std::vector<Buffer> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  std::vector<Hook> hooks_;
  int64_t next_hook_id_ = 0;
  std::vector<std::pair<std::string, std::shared_ptr<Extension>>> extensions_;
};

// A handle sharing one module implementation (libtorch: ModuleHolder, TORCH_MODULE): copies name
// the same module; `holder->` reaches it and `holder(args...)` calls its forward.
template <class Impl>
class ModuleHolder {
 public:
  using ContainedType = Impl;

  template <class... Args>
  requires std::is_constructible_v<Impl, Args...>
  explicit ModuleHolder(Args&&... args) : impl_(std::make_shared<Impl>(std::forward<Args>(args)...)) {}
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}  // NOLINT: as libtorch
  ModuleHolder(std::nullptr_t) {}                                       // NOLINT: an empty holder

  Impl* operator->() const { return checked(); }
  Impl& operator*() const { return *checked(); }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  bool is_empty() const { return impl_ == nullptr; }

  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    return checked()->forward(std::forward<Args>(args)...);
  }

 private:
  Impl* checked() const {
    if (!impl_) throw_empty_holder();
    return impl_.get();
  }
  [[noreturn]] static void throw_empty_holder();

  std::shared_ptr<Impl> impl_;
};

[[noreturn]] void throw_empty_module_holder();
template <class Impl>
void ModuleHolder<Impl>::throw_empty_holder() {
  throw_empty_module_holder();
}

std::ostream& operator<<(std::ostream& os, const Module& module);

}  // namespace tessera::nn

// TESSERA_MODULE(Linear) declares `class Linear : public ModuleHolder<LinearImpl>` (libtorch:
// TORCH_MODULE).
// Name is a class name there, which cannot take the parentheses bugprone-macro-parentheses asks for.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define TESSERA_MODULE(Name)                                     \
  class Name : public ::tessera::nn::ModuleHolder<Name##Impl> {  \
   public:                                                       \
    using ::tessera::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
  }
// NOLINTEND(bugprone-macro-parentheses)
