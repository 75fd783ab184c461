// Lookups by name answer from a per-thread memo of the registry (plugin/lookup_memo.hpp): a change
// to the registry (a plugin unloaded or loaded) must reach every thread's next lookup, even while
// tensors keep the old backend alive. And the per-kind component makers refuse kinds the SDK lacks.
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "dispatch/backends.hpp"
#include "plugin/component.hpp"
#include "plugin_test_support.hpp"

using namespace plugin_test;

namespace {

tessera::TensorOptions on_testdev() { return tessera::TensorOptions().backend("testdev"); }

// What making a 1-element float tensor on "testdev" gives: "" when it works, else the error's text.
std::string make_on_testdev() {
  try {
    const tessera::Tensor t = tessera::full({1}, 5.0f, on_testdev());
    return t.to_vector<float>() == std::vector<float>{5.f} ? "" : "wrong value";
  } catch (const tessera::Error& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("after its plugin is unloaded a backend is not found by name, though tensors of it live") {
  const ResetAndUnload cleanup({"backend-testdev"});
  tessera::load_plugin(testdev_file().string());
  const tessera::Tensor alive = tessera::full({2}, 3.0f, on_testdev());  // keeps the Backend object alive
  CHECK(make_on_testdev().empty());
  const tessera::dispatch::Backend* first = tessera::dispatch::backend("testdev").get();
  tessera::unload_plugin("backend-testdev");
  // The test plugins' directory is not on the search path: the lookup must reach the registry.
  const std::string error = make_on_testdev();
  CAPTURE(error);
  CHECK(contains(error, "no backend named 'testdev'"));
  CHECK(alive.to_vector<float>() == std::vector<float>{3.f, 3.f});

  tessera::load_plugin(testdev_file().string());
  CHECK(make_on_testdev().empty());
  // Loaded again, the plugin provides the very backend the live tensor is on.
  CHECK(tessera::dispatch::backend("testdev").get() == first);
  check_cpu_still_works();
}

TEST_CASE("a thread that found a backend before its plugin was unloaded no longer finds it") {
  const ResetAndUnload cleanup({"backend-testdev"});
  tessera::load_plugin(testdev_file().string());
  std::mutex mutex;
  std::condition_variable step;
  bool found = false, unloaded = false;
  std::string before, after;
  std::thread other([&] {
    before = make_on_testdev();  // this thread's memo now holds "testdev"
    const tessera::Tensor keep = tessera::full({1}, 2.0f, on_testdev());  // and its Backend stays alive
    std::unique_lock lock(mutex);
    found = true;
    step.notify_all();
    step.wait(lock, [&] { return unloaded; });
    lock.unlock();
    after = make_on_testdev();
  });
  {
    std::unique_lock lock(mutex);
    step.wait(lock, [&] { return found; });
  }
  tessera::unload_plugin("backend-testdev");
  {
    std::lock_guard lock(mutex);
    unloaded = true;
  }
  step.notify_all();
  other.join();
  CHECK(before.empty());
  CAPTURE(after);
  CHECK(contains(after, "no backend named 'testdev'"));
}

TEST_CASE("a component maker is refused for a kind outside the SDK's, naming the kind") {
  const auto maker = tessera::plugin::component_maker(TESSERA_COMPONENT_BACKEND);
  const std::string low = error_of([&] { tessera::plugin::install_component_maker(0, maker); });
  CAPTURE(low);
  CHECK(contains(low, "component kind 0"));
  CHECK(contains(low, "1 to 5"));
  const std::string high = error_of([&] { tessera::plugin::install_component_maker(6, maker); });
  CHECK(contains(high, "component kind 6"));
  const std::string unknown =
      error_of<tessera::PluginError>([] { (void)tessera::plugin::component_maker(7); });
  CAPTURE(unknown);
  CHECK(contains(unknown, "kind 7"));
}
