// State dicts: a module's parameters and persistent buffers by dotted name, and loading them back
// in place (PyTorch: state_dict / load_state_dict).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "tessera/autograd.hpp"
#include "tessera/errors.hpp"
#include "tessera/nn/module.hpp"

namespace tessera::nn {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "'" : ", '") + name + "'";
  return out;
}

void check_shape(const std::string& key, const Shape& given, const Shape& expected) {
  if (given != expected)
    throw Error(fmt::format("load_state_dict: '{}' has shape [{}] in the state dict but [{}] in the module",
                            key, fmt::join(given, ", "), fmt::join(expected, ", ")));
}

// Copies a value into a plain (dense or local) tensor in place.
void copy_into_tensor(Tensor destination, const Value& source) {
  destination.copy_(source.is_dtensor() ? source.dtensor().full_tensor() : source.tensor());
}

// Copies a value into a DTensor parameter's shard in place: a DTensor is redistributed to the
// parameter's placements first, a full tensor is cut to the parameter's shard.
void copy_into_dtensor(const DTensor& destination, const Value& source) {
  DTensor shard =
      source.is_dtensor()
          ? source.dtensor().redistribute(destination.device_mesh(), destination.placements())
          : distribute_tensor(source.tensor(), destination.device_mesh(), destination.placements());
  Tensor local = destination.to_local();
  local.copy_(shard.to_local());
}

}  // namespace

void StateDict::insert(std::string name, Value value) {
  if (contains(name)) throw Error(fmt::format("StateDict::insert: '{}' is already in the state dict", name));
  items_.emplace_back(std::move(name), std::move(value));
}

bool StateDict::contains(const std::string& name) const {
  for (const auto& [existing, value] : items_)
    if (existing == name) return true;
  return false;
}

const Value& StateDict::at(const std::string& name) const {
  for (const auto& [existing, value] : items_)
    if (existing == name) return value;
  throw Error(
      fmt::format("StateDict::at: no entry named '{}' (the dict has {} entries)", name, items_.size()));
}

std::vector<std::string> StateDict::keys() const {
  std::vector<std::string> out;
  for (const auto& [name, value] : items_) out.push_back(name);
  return out;
}

StateDict Module::state_dict() const {
  StateDict out;
  for (const auto& [name, parameter] : named_parameters(true)) out.insert(name, Value(parameter));
  std::vector<std::pair<std::string, const Module*>> modules{{"", this}};
  // Persistent buffers, walked like the parameters so that names follow the same paths.
  for (size_t i = 0; i < modules.size(); ++i) {
    const auto [prefix, module] = modules[i];
    for (const Buffer& buffer : module->buffers_)
      if (buffer.persistent) out.insert(prefix + buffer.name, buffer.value);
    for (const auto& [name, child] : module->children_)
      modules.emplace_back(prefix + name + ".", child.get());
  }
  return out;
}

LoadStateDictResult Module::load_state_dict(const StateDict& state, bool strict) {
  std::vector<std::pair<std::string, Parameter>> parameters = named_parameters(true);
  std::vector<std::pair<std::string, Tensor>> buffers;
  {
    std::vector<std::pair<std::string, Module*>> modules{{"", this}};
    for (size_t i = 0; i < modules.size(); ++i) {
      const auto [prefix, module] = modules[i];
      for (const Buffer& buffer : module->buffers_)
        if (buffer.persistent) buffers.emplace_back(prefix + buffer.name, buffer.value);
      for (const auto& [name, child] : module->children_)
        modules.emplace_back(prefix + name + ".", child.get());
    }
  }

  LoadStateDictResult result;
  std::vector<std::string> known;
  for (const auto& [name, parameter] : parameters) known.push_back(name);
  for (const auto& [name, buffer] : buffers) known.push_back(name);
  for (const std::string& name : known)
    if (!state.contains(name)) result.missing_keys.push_back(name);
  for (const std::string& name : state.keys())
    if (std::find(known.begin(), known.end(), name) == known.end()) result.unexpected_keys.push_back(name);
  // Checked before anything is copied, so a refused load leaves the module as it was.
  if (strict && (!result.missing_keys.empty() || !result.unexpected_keys.empty())) {
    std::string message = fmt::format("{}::load_state_dict (strict):", name_);
    if (!result.missing_keys.empty()) message += " missing keys " + joined(result.missing_keys) + ";";
    if (!result.unexpected_keys.empty())
      message += " unexpected keys " + joined(result.unexpected_keys) + ";";
    message += " pass strict=false to load the keys that match";
    throw Error(message);
  }

  // Shapes are checked before anything is copied too.
  for (const auto& [name, parameter] : parameters)
    if (state.contains(name)) check_shape(name, state.at(name).shape(), parameter.shape());
  for (const auto& [name, buffer] : buffers)
    if (state.contains(name)) check_shape(name, state.at(name).shape(), buffer.sizes());

  const NoGradGuard no_grad;
  for (const auto& [name, parameter] : parameters) {
    if (!state.contains(name)) continue;
    if (parameter.is_dtensor()) {
      copy_into_dtensor(parameter.dtensor(), state.at(name));
    } else {
      copy_into_tensor(parameter.tensor(), state.at(name));
    }
  }
  for (const auto& [name, buffer] : buffers)
    if (state.contains(name)) copy_into_tensor(buffer, state.at(name));
  return result;
}

}  // namespace tessera::nn
