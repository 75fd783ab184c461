// nn::Sequential and nn::ModuleList.
#include <fmt/format.h>

#include "tessera/errors.hpp"
#include "tessera/nn/modules.hpp"

namespace tessera::nn {

void SequentialImpl::add(std::shared_ptr<Module> module, std::function<Value(const Value&)> step) {
  register_module(std::to_string(steps_.size()), std::move(module));
  steps_.push_back(std::move(step));
}

Value SequentialImpl::forward(const Value& x) {
  return run_forward({x}, [this](const std::vector<Value>& in) {
    Value y = in.at(0);
    for (const auto& step : steps_) y = step(y);
    return y;
  });
}

void ModuleListImpl::append(std::shared_ptr<Module> module) {
  register_module(std::to_string(items_.size()), module);
  items_.push_back(std::move(module));
}

std::shared_ptr<Module> ModuleListImpl::operator[](size_t index) const {
  if (index >= items_.size())
    throw Error(fmt::format("nn::ModuleList: index {} is out of range for a list of {} modules", index,
                            items_.size()));
  return items_[index];
}

void ModuleListImpl::throw_wrong_type(size_t index) const {
  throw Error(fmt::format("nn::ModuleList::at: module {} is a {}, not the type asked for", index,
                          items_[index]->name()));
}

}  // namespace tessera::nn
