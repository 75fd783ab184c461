// The module tree: registration, traversal by dotted names, training mode, casts and hooks.
// State dicts are in state_dict.cpp.
#include "tessera/nn/module.hpp"

#include <fmt/format.h>

#include <ostream>

#include "tensor/memory_accounting.hpp"
#include "tessera/autograd.hpp"
#include "tessera/errors.hpp"

namespace tessera::nn {

Module::Module(std::string name) : name_(std::move(name)) {}

Module::~Module() = default;

void throw_empty_module_holder() {
  throw Error("nn::ModuleHolder: the holder is empty (made from nullptr); assign it a module first");
}

void Module::check_new_name(const std::string& name, const char* what) const {
  if (name.empty()) throw Error(fmt::format("{}::register_{}: the name is empty", name_, what));
  if (name.find('.') != std::string::npos)
    throw Error(
        fmt::format("{}::register_{}: the name '{}' contains '.'; dotted names are paths through "
                    "submodules, so a single name cannot contain one",
                    name_, what, name));
  const auto taken = [&](const std::string& existing) { return existing == name; };
  for (const auto& [existing, parameter] : parameters_)
    if (taken(existing))
      throw Error(fmt::format("{}::register_{}: '{}' is already a parameter", name_, what, name));
  for (const Buffer& buffer : buffers_)
    if (taken(buffer.name))
      throw Error(fmt::format("{}::register_{}: '{}' is already a buffer", name_, what, name));
  for (const auto& [existing, child] : children_)
    if (taken(existing))
      throw Error(fmt::format("{}::register_{}: '{}' is already a submodule", name_, what, name));
}

Parameter Module::register_parameter(std::string name, Parameter parameter, bool requires_grad) {
  check_new_name(name, "parameter");
  if (!parameter.defined())
    throw Error(fmt::format("{}::register_parameter: parameter '{}' is undefined", name_, name));
  if (requires_grad) {
    if (!is_floating(parameter.dtype()))
      throw Error(
          fmt::format("{}::register_parameter: parameter '{}' has dtype {}; only floating-point "
                      "parameters can require gradients (pass requires_grad=false)",
                      name_, name, dtype_name(parameter.dtype())));
    parameter.set_requires_grad(true);
  }
  detail::tag_memory(parameter.local(), "parameters");
  parameters_.emplace_back(std::move(name), parameter);
  return parameter;
}

Tensor Module::register_buffer(std::string name, Tensor buffer, bool persistent) {
  check_new_name(name, "buffer");
  if (!buffer.defined())
    throw Error(fmt::format("{}::register_buffer: buffer '{}' is undefined", name_, name));
  buffers_.push_back(Buffer{std::move(name), buffer, persistent});
  return buffer;
}

void Module::add_child(std::string name, std::shared_ptr<Module> module) {
  check_new_name(name, "module");
  if (!module) throw Error(fmt::format("{}::register_module: submodule '{}' is null", name_, name));
  children_.emplace_back(std::move(name), std::move(module));
}

void Module::replace_module(const std::string& name, std::shared_ptr<Module> module) {
  if (!module) throw Error(fmt::format("{}::replace_module: the new submodule '{}' is null", name_, name));
  for (auto& [existing, child] : children_) {
    if (existing == name) {
      child = std::move(module);
      return;
    }
  }
  throw Error(fmt::format("{}::replace_module: no submodule named '{}'", name_, name));
}

void Module::collect_parameters(const std::string& prefix, bool recurse,
                                std::vector<std::pair<std::string, Parameter>>& out) const {
  for (const auto& [name, parameter] : parameters_) out.emplace_back(prefix + name, parameter);
  if (!recurse) return;
  for (const auto& [name, child] : children_) child->collect_parameters(prefix + name + ".", true, out);
}

std::vector<std::pair<std::string, Parameter>> Module::named_parameters(bool recurse) const {
  std::vector<std::pair<std::string, Parameter>> out;
  collect_parameters("", recurse, out);
  // A parameter shared by two modules (tied weights) is listed once, under its first name.
  std::vector<std::pair<std::string, Parameter>> unique;
  for (auto& entry : out) {
    bool seen = false;
    for (const auto& kept : unique) seen = seen || kept.second.same_slot(entry.second);
    if (!seen) unique.push_back(std::move(entry));
  }
  return unique;
}

std::vector<Parameter> Module::parameters(bool recurse) const {
  std::vector<Parameter> out;
  for (auto& [name, parameter] : named_parameters(recurse)) out.push_back(parameter);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const Buffer& buffer : buffers_) out.emplace_back(buffer.name, buffer.value);
  if (!recurse) return out;
  for (const auto& [name, child] : children_)
    for (auto& [child_name, buffer] : child->named_buffers(true))
      out.emplace_back(name + "." + child_name, buffer);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& [name, child] : children_) out.push_back(child);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const {
  return children_;
}

void Module::collect_modules(const std::string& prefix,
                             std::vector<std::pair<std::string, std::shared_ptr<Module>>>& out) {
  for (const auto& [name, child] : children_) {
    const std::string path = prefix.empty() ? name : prefix + "." + name;
    out.emplace_back(path, child);
    child->collect_modules(path, out);
  }
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules() {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  // A module owned by a holder or a parent is always behind a shared_ptr; a module on the stack is
  // listed through a non-owning pointer.
  std::shared_ptr<Module> self = weak_from_this().lock();
  if (!self) self = std::shared_ptr<Module>(std::shared_ptr<Module>(), this);
  out.emplace_back("", self);
  collect_modules("", out);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules() {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& [name, module] : named_modules()) out.push_back(module);
  return out;
}

std::shared_ptr<Module> Module::get_submodule(const std::string& path) {
  for (auto& [name, module] : named_modules())
    if (name == path) return module;
  throw Error(fmt::format("{}::get_submodule: no submodule named '{}'", name_, path));
}

Parameter Module::get_parameter(const std::string& path) const {
  for (auto& [name, parameter] : named_parameters(true))
    if (name == path) return parameter;
  throw Error(fmt::format("{}::get_parameter: no parameter named '{}'", name_, path));
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::zero_grad(bool set_to_none) {
  for (const Parameter& parameter : parameters(true)) parameter.zero_grad(set_to_none);
}

void Module::to(DType dtype) {
  if (!is_floating(dtype))
    throw Error(
        fmt::format("{}::to: dtype {} is not a floating-point dtype; modules cast only to float types", name_,
                    dtype_name(dtype)));
  const NoGradGuard no_grad;
  for (auto& [name, parameter] : parameters_) {
    if (!is_floating(parameter.dtype()) || parameter.dtype() == dtype) continue;
    const bool requires_grad = parameter.requires_grad();
    if (parameter.is_dtensor()) {
      DTensor cast = parameter.dtensor().to(dtype).detach();
      cast.set_requires_grad(requires_grad);
      parameter.set(std::move(cast));
    } else {
      Tensor cast = parameter.tensor().to(dtype).detach();
      cast.set_requires_grad(requires_grad);
      parameter.set(std::move(cast));
    }
  }
  for (Buffer& buffer : buffers_)
    if (is_floating(buffer.value.dtype())) buffer.value = buffer.value.to(dtype);
  for (auto& [name, child] : children_) child->to(dtype);
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (auto& [name, child] : children_) child->apply(fn);
  fn(*this);
}

int64_t Module::register_forward_pre_hook(ForwardPreHook hook) {
  if (!hook) throw Error(fmt::format("{}::register_forward_pre_hook: the hook is empty", name_));
  hooks_.push_back(Hook{next_hook_id_, std::move(hook), nullptr});
  return next_hook_id_++;
}

int64_t Module::register_forward_hook(ForwardHook hook) {
  if (!hook) throw Error(fmt::format("{}::register_forward_hook: the hook is empty", name_));
  hooks_.push_back(Hook{next_hook_id_, nullptr, std::move(hook)});
  return next_hook_id_++;
}

void Module::remove_hook(int64_t id) {
  for (auto it = hooks_.begin(); it != hooks_.end(); ++it) {
    if (it->id == id) {
      hooks_.erase(it);
      return;
    }
  }
  throw Error(fmt::format("{}::remove_hook: no hook with id {}", name_, id));
}

Value Module::run_forward(std::vector<Value> inputs,
                          const std::function<Value(const std::vector<Value>&)>& body) {
  // Copies: a hook may remove itself or add others while it runs.
  const std::vector<Hook> hooks = hooks_;
  for (const Hook& hook : hooks)
    if (hook.pre) hook.pre(*this, inputs);
  Value output = body(inputs);
  for (const Hook& hook : hooks)
    if (hook.post) hook.post(*this, inputs, output);
  return output;
}

void Module::attach(const std::string& key, std::shared_ptr<Extension> extension) {
  for (auto& [existing, value] : extensions_) {
    if (existing == key) {
      value = std::move(extension);
      return;
    }
  }
  extensions_.emplace_back(key, std::move(extension));
}

std::shared_ptr<Module::Extension> Module::attached(const std::string& key) const {
  for (const auto& [existing, value] : extensions_)
    if (existing == key) return value;
  return nullptr;
}

void Module::print(std::string& out, const std::string& indent) const {
  out += name_ + "(" + extra_repr();
  if (!children_.empty()) {
    out += "\n";
    for (const auto& [name, child] : children_) {
      out += indent + "  (" + name + "): ";
      child->print(out, indent + "  ");
      out += "\n";
    }
    out += indent;
  }
  out += ")";
}

std::string Module::to_string() const {
  std::string out;
  print(out, "");
  return out;
}

std::ostream& operator<<(std::ostream& os, const Module& module) { return os << module.to_string(); }

}  // namespace tessera::nn
