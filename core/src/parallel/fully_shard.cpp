// fully_shard: a module's parameters become one FSDP group, gathered around its forward.
#include <fmt/format.h>

#include "parallel/fsdp_group.hpp"
#include "parallel/layouts.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

constexpr const char* kFsdpKey = "fully_shard";

std::shared_ptr<parallel::FsdpGroup> group_of(const nn::Module& module) {
  return std::static_pointer_cast<parallel::FsdpGroup>(module.attached(kFsdpKey));
}

}  // namespace

bool is_fully_sharded(const nn::Module& module) { return module.attached(kFsdpKey) != nullptr; }

nn::Module& fully_shard(nn::Module& module, const FullyShardOptions& options) {
  const std::string where = fmt::format("fully_shard({})", module.name());
  if (options.mesh.ndim() != 1)
    throw Error(fmt::format("{}: the mesh must be the 1-d data-parallel mesh (e.g. mesh[\"dp\"]); got {}",
                            where, options.mesh.to_string()));
  if (is_fully_sharded(module)) throw Error(fmt::format("{}: the module is already fully sharded", where));
  for (const auto dtype : {options.mp_policy.param_dtype, options.mp_policy.reduce_dtype})
    if (dtype && !is_floating(*dtype))
      throw Error(fmt::format("{}: mixed precision dtypes must be floating point; got {}", where,
                              dtype_name(*dtype)));

  // Parameters a fully_shard on a submodule manages belong to that group, not this one.
  std::vector<nn::Parameter> nested;
  for (const auto& [name, sub] : module.named_modules()) {
    if (name.empty()) continue;
    if (auto group = group_of(*sub)) {
      group->set_root(false);
      for (const nn::Parameter& p : sub->parameters()) nested.push_back(p);
    }
  }
  std::vector<std::pair<std::string, nn::Parameter>> own;
  for (const auto& [name, p] : module.named_parameters()) {
    bool managed = false;
    for (const nn::Parameter& q : nested) managed = managed || q.same_slot(p);
    if (!managed) own.emplace_back(name, p);
  }
  auto group = std::make_shared<parallel::FsdpGroup>(own, options, where);
  module.attach(kFsdpKey, group);
  if (group->empty()) return module;

  module.register_forward_pre_hook([group](nn::Module&, std::vector<nn::Value>&) { group->unshard(); });
  module.register_forward_hook([group](nn::Module&, const std::vector<nn::Value>&, nn::Value& output) {
    group->after_forward(output);
  });
  return module;
}

}  // namespace tessera
