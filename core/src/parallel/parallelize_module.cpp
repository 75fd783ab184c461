// parallelize_module: resolves each plan key (dotted, with `*` wildcards) to modules and applies
// its style.
#include <fmt/format.h>
#include <fnmatch.h>

#include <sstream>

#include "parallel/layouts.hpp"
#include "parallel/tp_styles.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> atoms;
  std::stringstream stream(path);
  std::string atom;
  while (std::getline(stream, atom, '.')) atoms.push_back(atom);
  return atoms;
}

// The modules under `module` whose path matches atoms[from..], each with its full path.
void match(nn::Module& module, const std::string& prefix, const std::vector<std::string>& atoms, size_t from,
           std::vector<std::pair<std::string, nn::Module*>>& out) {
  if (from == atoms.size()) {
    out.emplace_back(prefix, &module);
    return;
  }
  for (const auto& [name, child] : module.named_children()) {
    if (fnmatch(atoms[from].c_str(), name.c_str(), 0) == 0)
      match(*child, prefix.empty() ? name : prefix + "." + name, atoms, from + 1, out);
  }
}

std::string child_names(nn::Module& module) {
  std::string out;
  for (const auto& [name, child] : module.named_children()) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

void apply(nn::Module& module, const DeviceMesh& mesh, const ParallelStyle& style, const std::string& path) {
  const std::string where = fmt::format("parallelize_module: {} on '{}' ({})", style_name(style),
                                        path.empty() ? "<root>" : path, module.name());
  parallel::check_style_mesh(mesh, where);
  std::visit([&](const auto& s) { parallel::apply_style(module, mesh, s, where); }, style);
}

}  // namespace

std::string style_name(const ParallelStyle& style) {
  static constexpr const char* kNames[] = {"ColwiseParallel", "RowwiseParallel", "SequenceParallel",
                                           "PrepareModuleInput", "PrepareModuleOutput"};
  return kNames[style.index()];
}

nn::Module& parallelize_module(nn::Module& module, const DeviceMesh& mesh, const ParallelStyle& style) {
  apply(module, mesh, style, "");
  return module;
}

nn::Module& parallelize_module(nn::Module& module, const DeviceMesh& mesh, const ParallelizePlan& plan) {
  parallel::check_style_mesh(mesh, "parallelize_module");
  // Every key is resolved before any style is applied, so a typo leaves the module untouched.
  std::vector<std::vector<std::pair<std::string, nn::Module*>>> targets;
  for (const auto& [key, style] : plan) {
    if (key.empty())
      throw Error(
          "parallelize_module: a plan key is empty; name a submodule (use the overload "
          "taking one style for the module itself)");
    const std::vector<std::string> atoms = split_path(key);
    std::vector<std::pair<std::string, nn::Module*>> found;
    match(module, "", atoms, 0, found);
    if (found.empty())
      throw Error(
          fmt::format("parallelize_module: the plan key '{}' ({}) matches no submodule of {} (its children: "
                      "{})",
                      key, style_name(style), module.name(), child_names(module)));
    targets.push_back(std::move(found));
  }
  for (size_t i = 0; i < plan.size(); ++i)
    for (const auto& [path, target] : targets[i]) apply(*target, mesh, plan[i].second, path);
  return module;
}

}  // namespace tessera
