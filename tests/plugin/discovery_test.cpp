// Search path, discover_plugins() and probe_plugin() on good files.
#include <unistd.h>

#include <string>

#include "plugin_test_support.hpp"

using namespace plugin_test;
namespace fs = std::filesystem;

namespace {

const tessera::PluginProbe* find_probe(const std::vector<tessera::PluginProbe>& probes,
                                       const std::string& file_name) {
  for (const tessera::PluginProbe& probe : probes)
    if (probe.file.filename() == file_name) return &probe;
  return nullptr;
}

fs::path normalized(const fs::path& p) { return fs::weakly_canonical(p); }

}  // namespace

TEST_CASE("the search path ends with the plugin directory beside libtessera") {
  const std::vector<fs::path> path = tessera::plugin_search_path();
  REQUIRE_FALSE(path.empty());
  CHECK(normalized(path.back()) == normalized(fs::path(TESSERA_CPU_PLUGIN_FILE).parent_path()));
}

TEST_CASE("discover_plugins lists the plugins of the normal plugin directory") {
  const std::vector<std::string> backends_before = tessera::backend_names();
  const std::vector<tessera::PluginProbe> probes = tessera::discover_plugins();

  const tessera::PluginProbe* cpu = find_probe(probes, "libtessera-backend-cpu.so");
  REQUIRE(cpu != nullptr);
  CHECK(cpu->accepted);
  CHECK(cpu->reason.empty());
  CHECK(cpu->info.name == "backend-cpu");
  CHECK(cpu->info.sdk_major == 1);
  CHECK_FALSE(cpu->info.version.empty());
  REQUIRE(cpu->info.components.size() == 1);
  CHECK(cpu->info.components[0].kind == "backend");
  CHECK(cpu->info.components[0].name == "cpu");
  CHECK(normalized(cpu->info.file) == normalized(TESSERA_CPU_PLUGIN_FILE));

  // The test plugins live in a directory of their own, not on the default search path.
  if (std::getenv("TESSERA_PLUGIN_PATH") == nullptr)
    for (const tessera::PluginProbe& probe : probes)
      CHECK_FALSE(probe.file.filename().string().starts_with("libtessera-bad-"));
  // Discovery registers nothing.
  CHECK(tessera::backend_names() == backends_before);
}

TEST_CASE("TESSERA_PLUGIN_PATH comes first and discovery reports rejected files with their reasons") {
  const ScopedEnv env("TESSERA_PLUGIN_PATH",
                      std::string("/nonexistent-tessera-dir:") + TESSERA_TEST_PLUGIN_DIR);
  const std::vector<fs::path> path = tessera::plugin_search_path();
  REQUIRE(path.size() >= 3);
  CHECK(path[0] == "/nonexistent-tessera-dir");  // missing directories are skipped, not errors
  CHECK(path[1] == TESSERA_TEST_PLUGIN_DIR);

  const std::vector<std::string> backends_before = tessera::backend_names();
  const std::vector<tessera::PluginProbe> probes = tessera::discover_plugins();

  const tessera::PluginProbe* testdev = find_probe(probes, "libtessera-backend-testdev.so");
  REQUIRE(testdev != nullptr);
  CHECK(testdev->accepted);
  CHECK(testdev->info.name == "backend-testdev");

  const tessera::PluginProbe* no_query = find_probe(probes, "libtessera-bad-no-query.so");
  REQUIRE(no_query != nullptr);
  CHECK_FALSE(no_query->accepted);
  CHECK(contains(no_query->reason, "tessera_plugin_query"));

  const tessera::PluginProbe* not_elf = find_probe(probes, "libtessera-bad-not-elf.so");
  REQUIRE(not_elf != nullptr);
  CHECK_FALSE(not_elf->accepted);
  CHECK(contains(not_elf->reason, "cannot be loaded as a shared object"));

  const tessera::PluginProbe* cpu = find_probe(probes, "libtessera-backend-cpu.so");
  REQUIRE(cpu != nullptr);
  CHECK(cpu->accepted);

  CHECK(tessera::backend_names() == backends_before);
  check_cpu_still_works();
}

// A backend whose plugin file is on the path but refused is not "available": the error names the
// refusal and lists only the backends that are (it used to list the refused file's backend too).
TEST_CASE("an unknown backend whose plugin file is refused is not listed as available") {
  const fs::path dir = fs::temp_directory_path() / ("tessera-refused-backend-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(test_plugin("bad-sdk-major-2"), dir / "libtessera-backend-broken.so",
                fs::copy_options::overwrite_existing);
  const ScopedEnv env("TESSERA_PLUGIN_PATH", dir.string());
  const std::string message = error_of([] { tessera::set_default_backend("broken"); });
  fs::remove_all(dir);
  CAPTURE(message);
  CHECK(contains(message, "no backend named 'broken'"));
  CHECK(contains(message, "loading plugin 'backend-broken' failed"));
  CHECK(contains(message, "SDK"));  // the refusal's reason: another SDK major version
  const size_t from = message.find("(available backends: ");
  REQUIRE(from != std::string::npos);
  const std::string available = message.substr(from, message.find(')', from) - from);
  CHECK(contains(available, "cpu"));
  CHECK_FALSE(contains(available, "broken"));
  CHECK(tessera::default_backend() == "cpu");
  check_cpu_still_works();
}

TEST_CASE("probe_plugin describes a good plugin without registering it") {
  if (is_loaded("backend-testdev"))
    tessera::unload_plugin("backend-testdev");  // when all cases share a process
  const tessera::PluginProbe probe = tessera::probe_plugin(testdev_file());
  CHECK(probe.accepted);
  CHECK(probe.reason.empty());
  CHECK(probe.info.name == "backend-testdev");
  CHECK(probe.info.version == "9.8.7");
  CHECK(probe.info.sdk_major == 1);
  CHECK(probe.info.sdk_minor == 7);  // built by PluginBuilder against this SDK, 1.7
  REQUIRE(probe.info.components.size() == 1);
  CHECK(probe.info.components[0].kind == "backend");
  CHECK(probe.info.components[0].name == "testdev");
  CHECK_FALSE(has_backend("testdev"));
  CHECK_FALSE(is_loaded("backend-testdev"));
}

// Looking an algorithm up discovers the coll-* plugins on the search path of the moment; a search
// path configured afterwards is discovered too (it used to be ignored: "unknown algorithm").
TEST_CASE("collective plugins on a search path configured after the first lookup are discovered") {
  const std::string saved_rules = tessera::dist::algorithms();
  tessera::dist::set_algorithms("all_reduce:ring;*:direct");  // a lookup: discovery over today's path

  tessera::Config config;
  config.plugin_search_path = {fs::path(TESSERA_TEST_PLUGIN_DIR) / "late"};
  config.collective_algorithms = "all_reduce:coll-late;*:direct";
  CHECK_NOTHROW(tessera::configure(config));
  CHECK(is_loaded("coll-late"));
  CHECK(is_loaded("coll-ring"));  // plugins loaded before stay

  // coll-late is a direct all_reduce: 3 ranks holding 10 r + k sum to 30 + 3 k.
  std::vector<std::pair<int, tessera::Tensor>> shards;
  for (int r = 0; r < 3; ++r) shards.emplace_back(r, tessera::arange(4).to(tessera::kFloat32) + 10.0 * r);
  tessera::Tensor t = tessera::local_tensor(tessera::RankMap<tessera::Tensor>(shards));
  tessera::dist::all_reduce(t, tessera::ReduceOp::SUM);
  for (int r = 0; r < 3; ++r) CHECK(t.shard(r).to_vector<float>() == std::vector<float>{30, 33, 36, 39});

  tessera::configure(tessera::Config{});
  tessera::dist::set_algorithms(saved_rules);
}
