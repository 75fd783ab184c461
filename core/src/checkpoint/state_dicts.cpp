// get/set_model_state_dict and get/set_optimizer_state_dict: a module's and an optimizer's state
// as checkpoint state dicts, keyed by the module's parameter names.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tessera/autograd.hpp"
#include "tessera/checkpoint.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

bool same_parameter_tensor(const Tensor& a, const Tensor& b) {
  return a.is_local() ? a.local_impl() == b.local_impl() : a.impl() == b.impl();
}

// The module's name of each optimizer parameter, by index.
std::vector<std::string> parameter_names(const nn::Module& module, const optim::Optimizer& optimizer) {
  const auto named = module.named_parameters();
  std::vector<std::string> names;
  for (size_t i = 0; i < optimizer.params().size(); ++i) {
    const Tensor& p = optimizer.params()[i];
    const auto it = std::find_if(named.begin(), named.end(),
                                 [&](const auto& n) { return same_parameter_tensor(n.second.local(), p); });
    if (it == named.end())
      throw Error(fmt::format(
          "{}: parameter {} (shape {}) is not a parameter of the module, so it has no name to key "
          "its state by; build the optimizer from module->parameters() after parallelizing",
          optimizer.name(), i, p.shape().to_string()));
    names.push_back(it->first);
  }
  return names;
}

constexpr const char* kStatePrefix = "state.";
constexpr const char* kLrKey = "param_groups.lr";

}  // namespace

dcp::StateDict get_model_state_dict(const nn::Module& module) {
  dcp::StateDict state;
  for (const auto& [name, value] : module.state_dict()) {
    if (value.is_dtensor())
      state.emplace(name, value.dtensor());
    else
      state.emplace(name, value.tensor());
  }
  return state;
}

void set_model_state_dict(nn::Module& module, const dcp::StateDict& state, bool strict) {
  nn::StateDict values;
  for (const auto& [key, value] : state) {
    if (const auto* t = std::get_if<Tensor>(&value))
      values.insert(key, *t);
    else if (const auto* dt = std::get_if<DTensor>(&value))
      values.insert(key, *dt);
    else
      throw Error(fmt::format(
          "set_model_state_dict: entry '{}' is a scalar; a module's state holds only tensors", key));
  }
  module.load_state_dict(values, strict);
}

dcp::StateDict get_optimizer_state_dict(const nn::Module& module, optim::Optimizer& optimizer) {
  const std::vector<std::string> names = parameter_names(module, optimizer);
  optimizer.init_state();
  dcp::StateDict state;
  for (size_t i = 0; i < names.size(); ++i)
    for (const auto& [field, value] : optimizer.param_state(i)) {
      const std::string key = kStatePrefix + names[i] + "." + field;
      if (const auto* count = std::get_if<int64_t>(&value)) {
        state.emplace(key, *count);
      } else if (const DTensor* param = optimizer.dtensor_param(i)) {
        state.emplace(
            key, DTensor(std::get<Tensor>(value), param->device_mesh(), param->placements(), param->shape()));
      } else {
        state.emplace(key, std::get<Tensor>(value));
      }
    }
  state.emplace(kLrKey, optimizer.lr());
  return state;
}

void set_optimizer_state_dict(const nn::Module& module, optim::Optimizer& optimizer,
                              const dcp::StateDict& state) {
  const std::vector<std::string> names = parameter_names(module, optimizer);
  std::vector<optim::Optimizer::ParamState> per_param(names.size());
  for (const auto& [key, value] : state) {
    if (key == kLrKey) continue;
    // The longest parameter name that prefixes the key: names contain dots, as fields do not.
    size_t index = names.size();
    if (key.rfind(kStatePrefix, 0) == 0)
      for (size_t i = 0; i < names.size(); ++i) {
        const std::string prefix = kStatePrefix + names[i] + ".";
        if (key.rfind(prefix, 0) == 0 && key.find('.', prefix.size()) == std::string::npos &&
            (index == names.size() || names[i].size() > names[index].size()))
          index = i;
      }
    if (index == names.size())
      throw Error(
          fmt::format("set_optimizer_state_dict: key '{}' names no state of the optimizer's parameters; "
                      "expected 'state.<parameter>.<field>' or '{}'",
                      key, kLrKey));
    const std::string field = key.substr(std::string(kStatePrefix).size() + names[index].size() + 1);
    if (const auto* count = std::get_if<int64_t>(&value)) {
      per_param[index][field] = *count;
    } else if (const auto* t = std::get_if<Tensor>(&value)) {
      per_param[index][field] = *t;
    } else if (const auto* dt = std::get_if<DTensor>(&value)) {
      const DTensor* param = optimizer.dtensor_param(index);
      if (param == nullptr)
        throw Error(fmt::format("set_optimizer_state_dict: '{}' is a DTensor but parameter '{}' is a Tensor",
                                key, names[index]));
      NoGradGuard no_grad;
      per_param[index][field] = dt->placements() == param->placements()
                                    ? dt->to_local()
                                    : dt->redistribute(param->placements()).to_local();
    } else {
      throw Error(
          fmt::format("set_optimizer_state_dict: '{}' holds a float or string; optimizer state fields are "
                      "tensors and integers",
                      key));
    }
  }
  for (size_t i = 0; i < names.size(); ++i)
    if (!per_param[i].empty()) optimizer.set_param_state(i, per_param[i]);
  if (const auto it = state.find(kLrKey); it != state.end()) {
    const auto* lr = std::get_if<double>(&it->second);
    if (lr == nullptr) throw Error(fmt::format("set_optimizer_state_dict: '{}' must be a float", kLrKey));
    optimizer.set_lr(*lr);
  }
}

}  // namespace tessera
