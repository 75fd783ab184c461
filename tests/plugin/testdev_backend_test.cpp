// The good test plugin (backend "testdev": float32 fill and copy only): load by path, compute,
// unload while tensors live, errors for ops it lacks, loading twice.
#include <string>

#include "plugin_test_support.hpp"

using namespace plugin_test;
using tessera::TensorOptions;

namespace {

TensorOptions on_testdev() { return TensorOptions().backend("testdev"); }

}  // namespace

TEST_CASE("the test plugin loads by path and its backend computes") {
  const tessera::PluginInfo info = tessera::load_plugin(testdev_file().string());
  CHECK(info.name == "backend-testdev");
  CHECK(info.version == "9.8.7");
  CHECK(info.description == "test backend: float32 fill and copy only");
  CHECK(info.sdk_major == 1);
  CHECK(info.sdk_minor == 7);  // built by PluginBuilder against this SDK, 1.7
  CHECK(info.file == std::filesystem::weakly_canonical(testdev_file()));
  REQUIRE(info.components.size() == 1);
  CHECK(info.components[0].kind == "backend");
  CHECK(info.components[0].name == "testdev");
  CHECK(has_backend("testdev"));
  CHECK(is_loaded("backend-testdev"));

  tessera::Tensor t = tessera::empty({3}, on_testdev());
  t.fill_(2);
  CHECK(t.backend() == "testdev");
  CHECK(t.to_vector<float>() == std::vector<float>{2.f, 2.f, 2.f});

  // Host-to-device upload, then a strided view read back through the plugin's "copy" kernel.
  const tessera::Tensor m = tessera::from_values<float>({1, 2, 3, 4, 5, 6}, {2, 3}, on_testdev());
  CHECK(m.backend() == "testdev");
  CHECK(m.t().to_vector<float>() == std::vector<float>{1, 4, 2, 5, 3, 6});

  // fill_ through a strided view: fill a temporary, then copy it in.
  tessera::Tensor z = tessera::full({2, 2}, 0.0f, on_testdev());
  z.select(1, 0).fill_(7);
  CHECK(z.to_vector<float>() == std::vector<float>{7, 0, 7, 0});
  check_cpu_still_works();
}

TEST_CASE("an op without a kernel on the backend names the op the dtype and the backend") {
  tessera::load_plugin(testdev_file().string());
  const tessera::Tensor a = tessera::full({2}, 1.0f, on_testdev());
  const std::string message = error_of([&] { (void)(a + a); });
  CAPTURE(message);
  CHECK(contains(message, "'add'"));
  CHECK(contains(message, "float32"));
  CHECK(contains(message, "'testdev'"));

  const std::string cast = error_of([&] { (void)a.to(tessera::kInt64); });
  CAPTURE(cast);
  CHECK(contains(cast, "'cast'"));
  CHECK(contains(cast, "'testdev'"));

  const std::string mixed = error_of([&] { (void)(a + tessera::ones({2})); });
  CAPTURE(mixed);
  CHECK(contains(mixed, "different backends"));
  check_cpu_still_works();
}

TEST_CASE("loading the same file twice is a no-op returning the same info") {
  const tessera::PluginInfo first = tessera::load_plugin(testdev_file().string());
  const tessera::PluginInfo second = tessera::load_plugin(testdev_file().string());
  // Another spelling of the same path is the same file.
  const tessera::PluginInfo third = tessera::load_plugin(
      (std::filesystem::path(TESSERA_TEST_PLUGIN_DIR) / "." / testdev_file().filename()).string());
  for (const tessera::PluginInfo* again : {&second, &third}) {
    CHECK(again->name == first.name);
    CHECK(again->version == first.version);
    CHECK(again->file == first.file);
    CHECK(again->components.size() == first.components.size());
  }
  const std::vector<tessera::PluginInfo> loaded = tessera::loaded_plugins();
  CHECK(std::count_if(loaded.begin(), loaded.end(),
                      [](const auto& p) { return p.name == "backend-testdev"; }) == 1);
  const std::vector<std::string> names = tessera::backend_names();
  CHECK(std::count(names.begin(), names.end(), "testdev") == 1);
}

TEST_CASE("unload_plugin removes the backend while tensors made from it stay readable") {
  tessera::load_plugin(testdev_file().string());
  const tessera::Tensor t = tessera::from_values<float>({1, 2, 3}, {3}, on_testdev());

  tessera::unload_plugin("backend-testdev");
  CHECK_FALSE(has_backend("testdev"));
  CHECK_FALSE(is_loaded("backend-testdev"));
  CHECK_THROWS_AS(tessera::unload_plugin("backend-testdev"), tessera::PluginError);

  // The library stays mapped for as long as a tensor made from it lives, kernels included.
  CHECK(t.backend() == "testdev");
  CHECK(t.to_vector<float>() == std::vector<float>{1, 2, 3});
  CHECK(t.flip({0}).to_vector<float>() == std::vector<float>{3, 2, 1});

  // New tensors cannot be made there: the backend is gone (and not on the search path).
  const std::string message = error_of([] { (void)tessera::empty({1}, on_testdev()); });
  CAPTURE(message);
  CHECK(contains(message, "no backend named 'testdev'"));

  // Loading it again registers it afresh.
  tessera::load_plugin(testdev_file().string());
  CHECK(has_backend("testdev"));
  tessera::Tensor u = tessera::empty({2}, on_testdev());
  u.fill_(5);
  CHECK(u.to_vector<float>() == std::vector<float>{5, 5});
  CHECK(t.to_vector<float>() == std::vector<float>{1, 2, 3});
  check_cpu_still_works();
}

TEST_CASE("a local tensor whose shards live on different backends is rejected") {
  tessera::load_plugin(testdev_file().string());
  const tessera::Tensor on_cpu = tessera::ones({2});
  const tessera::Tensor elsewhere = tessera::full({2}, 1.0f, on_testdev());
  const std::string message = error_of([&] { (void)tessera::local_tensor({{0, on_cpu}, {1, elsewhere}}); });
  CAPTURE(message);
  CHECK(contains(message, "shards are on different backends: rank 0 is on 'cpu' but rank 1 is on 'testdev'"));
}
