#include "dispatch/memory_context.hpp"

namespace tessera::dispatch {
namespace {

thread_local const std::string* category_here = nullptr;

}  // namespace

const std::string* memory_category() { return category_here; }

const std::string* exchange_memory_category(const std::string* category) {
  const std::string* replaced = category_here;
  category_here = category;
  return replaced;
}

MemoryCategoryBinding::MemoryCategoryBinding(const std::string* category) : saved_(category_here) {
  category_here = category;
}

MemoryCategoryBinding::~MemoryCategoryBinding() { category_here = saved_; }

}  // namespace tessera::dispatch
