// A thread's memo of the registry's answers to lookups by name, valid while the registry's
// generation is the one they were found under. A hot path (a factory finding its backend, a
// collective finding its algorithm) then answers from the memo: no registry lock, no search of its
// tables. Kept per thread (thread_local, by the layer that owns the kind), so that no thread waits
// on another's lookups; the generation makes every change (a plugin loaded or unloaded, the default
// backend set) visible to all of them. Weak references: a memo never keeps an unloaded plugin's
// library mapped (the registry holds the components in force).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "plugin/registry.hpp"

namespace tessera::plugin {

template <class T>
class LookupMemo {
 public:
  // The object `key` names: remembered, else look(registry, key) (nullptr is not remembered). The
  // generation is read before a lookup, so a change racing with it leaves the memo stale, never
  // wrong.
  template <class Look>
  std::shared_ptr<const T> find(const std::string& key, Look&& look) {
    Registry& registry = current();
    for (const auto& [known, object] : found_)
      if (known == key)
        if (std::shared_ptr<const T> alive = object.lock()) return alive;
    std::shared_ptr<const T> answer = std::static_pointer_cast<const T>(look(registry, key));
    if (answer == nullptr) return answer;
    std::erase_if(found_, [&](const auto& entry) { return entry.first == key; });
    found_.emplace_back(key, answer);
    return answer;
  }

 private:
  // The registry, after forgetting what an older generation found. The first call takes it through
  // Registry::instance(), which applies the start-up configuration.
  Registry& current() {
    if (registry_ == nullptr) {
      registry_ = &Registry::instance();
      generation_ = registry_->generation();
    } else if (const uint64_t now = registry_->generation(); now != generation_) {
      generation_ = now;
      found_.clear();
    }
    return *registry_;
  }

  Registry* registry_ = nullptr;
  uint64_t generation_ = 0;
  std::vector<std::pair<std::string, std::weak_ptr<const T>>> found_;  // by the key asked for
};

}  // namespace tessera::plugin
