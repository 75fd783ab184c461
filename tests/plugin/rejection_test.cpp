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
  check_rejected(
      test_plugin("bad-transport-small"),
      {"transport 'bad-transport-small'", "tessera_transport struct is 72 bytes, the host needs at least 88",
       "field 'free_request'"});
  CHECK(!has_transport("bad-transport-small"));
}

TEST_CASE("a component of unknown kind 6 from a plugin built for the host's SDK is rejected") {
  check_rejected(test_plugin("bad-kind-6"), {"component #0 ('bad-kind-6') has unknown kind 6 in field 'kind'",
                                             "claims SDK 1." + std::to_string(TESSERA_SDK_VERSION_MINOR)});
}

// A query that lets a C++ exception escape (the SDK forbids it) is a rejection, not an abort, and
// the exception (whose code lives in the plugin) is gone before the library is unloaded.
TEST_CASE("a plugin whose tessera_plugin_query throws is rejected and the host loads the next plugin") {
  check_rejected(
      test_plugin("bad-query-throws"),
      {"tessera_plugin_query threw: bad-query-throws: the plugin's configuration could not be read"});
  check_rejected(test_plugin("bad-query-throws-int"),
                 {"tessera_plugin_query threw a non-standard exception"});

  const bool was_loaded = is_loaded("backend-testdev");
  const tessera::PluginInfo testdev = tessera::load_plugin(testdev_file().string());
  CHECK(testdev.name == "backend-testdev");
  CHECK(has_backend("testdev"));
  CHECK(tessera::full({3}, 2.5f, tessera::TensorOptions().backend("testdev")).to_vector<float>() ==
        std::vector<float>{2.5f, 2.5f, 2.5f});
  if (!was_loaded) tessera::unload_plugin("backend-testdev");
}

TEST_CASE("a plugin that refuses the host without a message says so") {
  check_rejected(test_plugin("bad-refuses-silently"),
                 {"refused the host", "status 4 (VERSION_MISMATCH): no message"});
}

TEST_CASE("a component named differently from its table is rejected with both names") {
  check_rejected(test_plugin("bad-name-mismatch"),
                 {"component #0 is named 'bad-name-mismatch' but its backend table is named "
                  "'bad-name-mismatch-table'"});
  check_rejected(
      test_plugin("bad-coll-name-mismatch"),
      {"component #0 is named 'bad-coll-name-mismatch' but its collective algorithm table is named "
       "'ring-by-another-name'"});
  CHECK_FALSE(is_loaded("bad-coll-name-mismatch"));
}

TEST_CASE("a plugin built for SDK 1.2 with an extension pointer set is rejected: NULL was the rule then") {
  check_rejected(test_plugin("bad-extension-info"), {"tessera_plugin_info: field 'extension' is not NULL",
                                                     "extensions are not yet negotiated", "SDK 1.2"});
  check_rejected(test_plugin("bad-extension-component"),
                 {"component #0 ('bad-extension-component'): field 'extension' is not NULL",
                  "extensions are not yet negotiated"});
  check_rejected(test_plugin("bad-extension-backend"),
                 {"backend 'bad-extension-backend': tessera_backend: field 'extension' is not NULL",
                  "extensions are not yet negotiated"});
}

TEST_CASE(
    "an SDK 1.3 extension chain with an entry smaller than its header is rejected naming plugin, struct, "
    "position") {
  check_rejected(
      test_plugin("bad-extension-short-entry"),
      {"plugin 'bad-extension-short-entry': tessera_backend of component #0 ('bad-extension-short-entry')",
       "extension chain entry #1 at 0x",
       "has struct_size 8, less than the 24-byte tessera_extension header"});
}

TEST_CASE(
    "an extension field that leads to something other than a chain is rejected, never followed into a "
    "crash") {
  // Text read as an entry: its first 8 bytes make a struct_size far beyond any extension.
  check_rejected(test_plugin("bad-extension-not-a-chain"),
                 {"plugin 'bad-extension-not-a-chain': tessera_backend of component #0",
                  "extension chain entry #0 at 0x", "more than the 65536 bytes an extension struct may have",
                  "is the 'extension' field set to something that is not an extension chain?"});
  // An address nothing is mapped at, as the field and as a link further down a chain.
  check_rejected(test_plugin("bad-extension-wild"),
                 {"component #0 ('bad-extension-wild')", "extension chain entry #0 at 0x40 cannot be read"});
  check_rejected(test_plugin("bad-extension-wild-next"),
                 {"plugin 'bad-extension-wild-next': tessera_plugin_info",
                  "extension chain entry #1 at 0x40 cannot be read"});
  check_rejected(
      test_plugin("bad-extension-misaligned"),
      {"tessera_backend of component #0", "extension chain entry #0 at 0x", "is not aligned to 8 bytes"});
  CHECK(TESSERA_EXTENSION_STRUCT_MAX == 65536);
  check_cpu_still_works();
}

TEST_CASE(
    "an extension type below TESSERA_EXTENSION_USER that the plugin's SDK minor does not define is "
    "rejected") {
  check_rejected(
      test_plugin("bad-extension-sdk-type"),
      {"tessera_backend of component #0 ('bad-extension-sdk-type')", "extension chain entry #1 at 0x",
       "has type 0x1, which is no extension type: SDK 1.7 defines none",
       "start at TESSERA_EXTENSION_USER (0x10000)"});
}

TEST_CASE(
    "an SDK 1.3 extension chain that loops is rejected once it passes TESSERA_EXTENSION_CHAIN_MAX entries") {
  CHECK(TESSERA_EXTENSION_CHAIN_MAX == 64);
  check_rejected(test_plugin("bad-extension-cycle"),
                 {"plugin 'bad-extension-cycle': component #0 ('bad-extension-cycle')",
                  "extension chain has more than 64 entries (entry #64 is one too many"});
}

TEST_CASE("a kernel op outside the catalogue is rejected with the closest catalogue name") {
  check_rejected(test_plugin("bad-kernel-relu"),
                 {"backend 'bad-kernel-relu'",
                  "kernel #1 has op 'Relu', which is not in the kernel catalogue", "did you mean 'relu'?"});
  check_rejected(test_plugin("bad-kernel-matmul"),
                 {"kernel #1 has op 'matmul', which is not in the kernel catalogue", "did you mean 'mm'?"});
}

TEST_CASE("two kernels for one op and dtype are rejected naming both entries") {
  check_rejected(test_plugin("bad-kernel-duplicate"),
                 {"backend 'bad-kernel-duplicate'",
                  "kernel #1 ('fill', float32) duplicates kernel #0 ('fill', float32)"});
}

TEST_CASE("a kernel for a vector dtype is rejected") {
  check_rejected(test_plugin("bad-kernel-lanes-4"),
                 {"kernel #1 ('add')", "lanes=4: vector dtypes are not supported; expected lanes=1"});
}

// The folds came with SDK 1.4: a plugin built for 1.3 cannot know their contract.
TEST_CASE("a fold kernel from a plugin built for SDK 1.3 is rejected, naming the version that added it") {
  check_rejected(
      test_plugin("bad-kernel-fold-sdk13"),
      {"backend 'bad-kernel-fold-sdk13'",
       "kernel #1 has op 'fold_add', which is not in the kernel catalogue (sdk/KERNELS.md) of SDK 1.3, "
       "the version the plugin was built for",
       "it came with SDK 1.4: rebuild the plugin against it"});
}

// sin, cos, where and cumsum came with SDK 1.6.
TEST_CASE(
    "a sin kernel from a plugin built for SDK 1.5 is rejected, naming 1.6 as the version that added it") {
  check_rejected(test_plugin("bad-kernel-sin-sdk15"),
                 {"backend 'bad-kernel-sin-sdk15'",
                  "kernel #1 has op 'sin', which is not in the kernel catalogue (sdk/KERNELS.md) of SDK 1.5, "
                  "the version the plugin was built for",
                  "it came with SDK 1.6: rebuild the plugin against it"});
}

// The indexing kernels came with SDK 1.6.
TEST_CASE(
    "an indexing kernel from a plugin built for SDK 1.5 is rejected, naming the version that added it") {
  check_rejected(
      test_plugin("bad-kernel-gather-sdk15"),
      {"kernel #1 has op 'gather', which is not in the kernel catalogue (sdk/KERNELS.md) of SDK 1.5",
       "it came with SDK 1.6: rebuild the plugin against it"});
}

// The normalisation kernels came with SDK 1.7.
TEST_CASE(
    "a layer_norm kernel from a plugin built for SDK 1.6 is rejected, naming 1.7 as the version that added "
    "it") {
  check_rejected(
      test_plugin("bad-kernel-norm-sdk16"),
      {"backend 'bad-kernel-norm-sdk16'",
       "kernel #1 has op 'layer_norm', which is not in the kernel catalogue (sdk/KERNELS.md) of SDK 1.6, "
       "the version the plugin was built for",
       "it came with SDK 1.7: rebuild the plugin against it"});
}

// A plugin built for a newer SDK minor may serve ops that minor's catalogue added: they are never
// called here, and the rest of the backend works.
TEST_CASE("an op outside this host's catalogue from a plugin for a newer SDK minor is accepted") {
  const tessera::PluginInfo info = tessera::load_plugin(test_plugin("bad-kernel-future-op").string());
  CHECK(info.sdk_minor == TESSERA_SDK_VERSION_MINOR + 1);
  CHECK(has_backend("bad-kernel-future-op"));
  tessera::unload_plugin("bad-kernel-future-op");
  CHECK_FALSE(has_backend("bad-kernel-future-op"));
}
