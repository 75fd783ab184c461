#include "tessera/process_group.hpp"

#include <set>

#include <fmt/format.h>

#include "tessera/errors.hpp"
#include "tessera/topology.hpp"

namespace tessera {

ProcessGroup::ProcessGroup(std::initializer_list<int> ranks) : ProcessGroup(std::vector<int>(ranks)) {}

ProcessGroup::ProcessGroup(std::vector<int> ranks) { *this = from_fibres({std::move(ranks)}); }

ProcessGroup ProcessGroup::from_fibres(std::vector<std::vector<int>> fibres) {
  if (fibres.empty()) throw Error("ProcessGroup: needs at least one fibre of ranks");
  std::set<int> seen;
  for (const auto& fibre : fibres) {
    if (fibre.empty()) throw Error("ProcessGroup: a fibre has no ranks");
    if (fibre.size() != fibres.front().size())
      throw Error(fmt::format("ProcessGroup: fibres differ in size ({} and {}); sibling groups must be equal",
                              fibres.front().size(), fibre.size()));
    for (int r : fibre) {
      if (r < 0) throw Error(fmt::format("ProcessGroup: rank {} is negative", r));
      if (!seen.insert(r).second) throw Error(fmt::format("ProcessGroup: rank {} appears twice", r));
    }
  }
  ProcessGroup group;
  group.fibres_ = std::move(fibres);
  return group;
}

int ProcessGroup::size() const {
  if (fibres_.empty())
    throw Error("ProcessGroup: the default group's size is the number of ranks of the argument");
  return static_cast<int>(fibres_.front().size());
}

ProcessGroup ProcessGroup::with_topology(std::shared_ptr<const Topology> topology) const {
  if (topology != nullptr)
    for (const auto& fibre : fibres_)
      for (int r : fibre)
        if (r >= topology->world())
          throw Error(
              fmt::format("ProcessGroup {}: topology '{}' spans {} ranks (0..{}) but the group holds rank {}",
                          to_string(), topology->name(), topology->world(), topology->world() - 1, r));
  ProcessGroup group = *this;
  group.topology_ = std::move(topology);
  return group;
}

bool ProcessGroup::operator==(const ProcessGroup& other) const {
  if (fibres_ != other.fibres_) return false;
  if (topology_ == nullptr || other.topology_ == nullptr) return topology_ == other.topology_;
  return topology_->fingerprint() == other.topology_->fingerprint();
}

std::string ProcessGroup::to_string() const {
  if (fibres_.empty()) return "default group";
  std::string text;
  for (const auto& fibre : fibres_)
    text += (text.empty() ? "" : " ") + fmt::format("{{{}}}", fmt::join(fibre, ","));
  return text;
}

}  // namespace tessera
