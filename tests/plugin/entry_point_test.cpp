// Entry points, error codes and struct sizes of SDK 1.5, seen from a plugin's side: the versioned
// entry point a 1.x host calls, the status names and the truncation note in the host's messages.
#include <dlfcn.h>

#include <string>

#include "plugin_test_support.hpp"
#include "tessera/sdk/plugin.h"

using namespace plugin_test;

TEST_CASE("an object exporting entry points for majors 1 and 2 is loaded through tessera_plugin_query_v1") {
  const tessera::PluginInfo info = tessera::load_plugin(test_plugin("bad-two-majors").string());
  CHECK(info.name == "two-majors");
  CHECK(info.sdk_major == 1);
  // Had the host called the _v2 entry point, the description would be the major-2 one (and rejected).
  CHECK(info.description == "the major-1 description");
  CHECK(tessera::empty({2}, tessera::TensorOptions().backend("two-majors")).numel() == 2);
  tessera::unload_plugin("two-majors");
  check_cpu_still_works();
}

TEST_CASE("an object exporting only another major's entry point is rejected as built for another major") {
  const std::filesystem::path file = test_plugin("bad-only-v2");
  const std::string message = load_error(file);
  CAPTURE(message);
  CHECK(contains(message,
                 "plugin '" + file.string() +
                     "' rejected: it exports 'tessera_plugin_query_v2' (SDK major "
                     "2) but neither 'tessera_plugin_query_v1' nor 'tessera_plugin_query', which this host "
                     "(SDK 1.7) calls"));
  check_cpu_still_works();
}

TEST_CASE("the builder's plugins export the versioned entry point too") {
  // libtessera-coll-params.so is built with TESSERA_DEFINE_PLUGIN.
  void* library = ::dlopen(test_plugin("coll-params").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(library != nullptr);
  CHECK(::dlsym(library, TESSERA_PLUGIN_QUERY_SYMBOL_V1) != nullptr);
  CHECK(::dlsym(library, TESSERA_PLUGIN_QUERY_SYMBOL) != nullptr);
  ::dlclose(library);
}

TEST_CASE(
    "a refusal shows its status by name, and a message cut by the error buffer is said to be truncated") {
  const std::string cut = load_error(test_plugin("bad-refusal-long"));
  CAPTURE(cut);
  CHECK(contains(cut, "its init refused, status 7 (NOT_FOUND): <xxxx"));
  // 511 bytes of the 700 arrived: '<' and 510 'x', never the closing '>'.
  CHECK(contains(cut, "<" + std::string(510, 'x') +
                          " [the plugin's message was truncated to the 511 bytes of "
                          "tessera_error.message]"));
  CHECK_FALSE(contains(cut, ">"));

  const std::string unterminated = load_error(test_plugin("bad-refusal-no-nul"));
  CAPTURE(unterminated);
  CHECK(contains(unterminated, "status 8 (UNAVAILABLE): " + std::string(511, 'y') +
                                   " [the plugin's message was "
                                   "truncated"));
  CHECK_FALSE(contains(unterminated, std::string(512, 'y')));

  const std::string unknown = load_error(test_plugin("bad-refusal-code-42"));
  CAPTURE(unknown);
  CHECK(contains(unknown, "status 42 (a code no SDK 1.x up to 1.7 defines): a code of its own"));
  CHECK_FALSE(contains(unknown, "truncated"));
  check_cpu_still_works();
}
