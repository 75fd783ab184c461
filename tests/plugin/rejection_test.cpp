// Broken plugins: each is rejected with a PluginError naming the file and the reason, probing it
// gives the same reason, nothing of it gets registered, and the host keeps computing afterwards.
#include <algorithm>
#include <cstddef>
#include <string>

#include "plugin_test_support.hpp"
#include "tessera/sdk/backend.h"
#include "tessera/sdk/plugin.h"

using namespace plugin_test;

namespace {

void check_rejected(const std::filesystem::path& file, std::initializer_list<std::string> reason_parts) {
  CAPTURE(file.string());
  tessera::load_plugin("backend-cpu");  // so that the checks below see a working host before and after
  const std::vector<std::string> backends_before = tessera::backend_names();
  const std::vector<tessera::PluginInfo> plugins_before = tessera::loaded_plugins();

  const std::string message = load_error(file);
  CAPTURE(message);
  CHECK(contains(message, file.string()));
  for (const std::string& part : reason_parts) CHECK(contains(message, part));

  const tessera::PluginProbe probe = tessera::probe_plugin(file);
  CHECK_FALSE(probe.accepted);
  CHECK(probe.file == file);
  CHECK(contains(probe.reason, file.string()));
  for (const std::string& part : reason_parts) CHECK(contains(probe.reason, part));

  CHECK(tessera::backend_names() == backends_before);
  CHECK(tessera::loaded_plugins().size() == plugins_before.size());
  check_cpu_still_works();
}

}  // namespace

TEST_CASE("a missing file is rejected") { check_rejected(test_plugin("does-not-exist"), {"no such file"}); }

TEST_CASE("a file that is not a shared object is rejected") {
  check_rejected(test_plugin("bad-not-elf"), {"cannot be loaded as a shared object"});
}

TEST_CASE("a shared object without tessera_plugin_query is rejected") {
  check_rejected(test_plugin("bad-no-query"), {"does not export the entry point 'tessera_plugin_query'"});
}

TEST_CASE("a plugin built for SDK major 2 is rejected") {
  check_rejected(test_plugin("bad-sdk-major-2"), {"built for SDK 2.0", "supports SDK major 1"});
}

TEST_CASE("a plugin that refuses the host from its query is rejected with its message") {
  check_rejected(test_plugin("bad-refuses-host"),
                 {"refused the host", "status 4", "bad-refuses-host needs SDK major 2, host offers 1"});
}

// The least the host needs is the struct as SDK 1.0 defined it: up to and including its last v1 field.
TEST_CASE("a plugin info struct smaller than SDK 1.0's is rejected") {
  const std::string sizes = "tessera_plugin_info is " +
                            std::to_string(offsetof(tessera_plugin_info, num_components)) +
                            " bytes, the host needs at least " +
                            std::to_string(offsetof(tessera_plugin_info, components) + sizeof(void*));
  check_rejected(test_plugin("bad-small-plugin-info"), {sizes});
}

TEST_CASE("a backend table smaller than SDK 1.0's is rejected") {
  const std::string sizes = "tessera_backend struct is " + std::to_string(offsetof(tessera_backend, alloc)) +
                            " bytes, the host needs at least " +
                            std::to_string(offsetof(tessera_backend, kernels) + sizeof(void*));
  check_rejected(test_plugin("bad-small-backend"), {"backend 'bad-small-backend'", sizes});
}

TEST_CASE("a backend with a NULL alloc is rejected") {
  check_rejected(test_plugin("bad-null-alloc"),
                 {"backend 'bad-null-alloc'", "required function 'alloc' is NULL"});
}

TEST_CASE("a backend with a NULL free is rejected") {
  check_rejected(test_plugin("bad-null-free"),
                 {"backend 'bad-null-free'", "required function 'free' is NULL"});
}

TEST_CASE("a backend with a NULL copy is rejected") {
  check_rejected(test_plugin("bad-null-copy"),
                 {"backend 'bad-null-copy'", "required function 'copy' is NULL"});
}

TEST_CASE("a kernel entry with a NULL function is rejected") {
  check_rejected(test_plugin("bad-null-kernel-fn"),
                 {"backend 'bad-null-kernel'", "kernel #1 ('copy') has a NULL function"});
}

TEST_CASE("a plugin with an unresolved symbol is rejected at load time") {
  check_rejected(test_plugin("bad-unresolved-symbol"),
                 {"cannot be loaded as a shared object", "tessera_test_symbol_that_does_not_exist"});
}

TEST_CASE("a second plugin offering an already registered backend name is rejected and the first stays") {
  const tessera::PluginInfo cpu = tessera::load_plugin("backend-cpu");
  const std::vector<std::string> backends_before = tessera::backend_names();
  const std::filesystem::path file = test_plugin("bad-duplicate-cpu");

  const std::string message = load_error(file);
  CAPTURE(message);
  CHECK(contains(message, file.string()));
  CHECK(contains(message, "backend 'cpu' is already provided by " + cpu.file.string()));

  CHECK_FALSE(is_loaded("bad-duplicate-cpu"));
  CHECK(is_loaded("backend-cpu"));
  CHECK(tessera::backend_names() == backends_before);
  CHECK(tessera::ones({1}).backend() == "cpu");
  check_cpu_still_works();
}

TEST_CASE("unloading a plugin that is not loaded is an error naming it") {
  CHECK_THROWS_WITH_AS(tessera::unload_plugin("no-such-plugin"),
                       "cannot unload plugin 'no-such-plugin': it is not loaded", tessera::PluginError);
}

TEST_CASE("loading by an unknown name names the search path") {
  const std::string message = load_error("no-such-plugin");
  CHECK(contains(message, "plugin 'no-such-plugin' not found"));
  CHECK(contains(message, "libtessera-no-such-plugin.so"));
  check_cpu_still_works();
}

// Transports (SDK 1.1): the least the host needs is the table up to its last required function,
// free_request (7 function pointers after struct_size, extension, name, context: 11 * 8 = 88 bytes).
TEST_CASE("a transport with a NULL wait is rejected") {
  check_rejected(test_plugin("bad-transport-null-wait"),
                 {"transport 'bad-transport-null-wait'", "required function 'wait' is NULL"});
  CHECK(!has_transport("bad-transport-null-wait"));
}

TEST_CASE("a transport table smaller than SDK 1.1's is rejected") {
  // struct_size stops before 'wait': struct_size, extension, name, context, init, finalize, isend,
  // irecv, test are 9 fields of 8 bytes.
  check_rejected(test_plugin("bad-transport-small"),
                 {"transport 'bad-transport-small'", "tessera_transport struct is 72 bytes, the host needs at least 88",
                  "field 'free_request'"});
  CHECK(!has_transport("bad-transport-small"));
}

TEST_CASE("a component of unknown kind 5 from a plugin built for the host's SDK is rejected") {
  check_rejected(test_plugin("bad-kind-5"),
                 {"component #0 ('bad-kind-5') has unknown kind 5 in field 'kind'",
                  "claims SDK 1." + std::to_string(TESSERA_SDK_VERSION_MINOR)});
}
