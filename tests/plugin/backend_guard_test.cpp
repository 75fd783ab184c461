// Every call into a backend's plugin is guarded (bad_plugins/backend_faults.cpp, faults on cue):
// an allocation that succeeds without memory, or that throws, and a copy that throws are errors
// naming the backend, its plugin and the call; a free or set_num_threads that throws is logged,
// never fatal (free runs in destructors); afterwards the backend works again.
#include <string>
#include <vector>

#include "plugin_test_support.hpp"

using namespace plugin_test;
namespace ts = tessera;

namespace {

const char* const kBackend = "bad-backend-faults";

void load_faulty() {
  if (!is_loaded(kBackend)) ts::load_plugin(test_plugin(kBackend).string());
}

ts::Tensor faulty_empty(int64_t n) {
  return ts::empty({n}, ts::TensorOptions(ts::kFloat32).backend(kBackend));
}

}  // namespace

TEST_CASE("a backend's allocation that succeeds without memory, or throws, is an error naming it") {
  const ResetAndUnload cleanup({kBackend});
  load_faulty();
  {
    const ScopedEnv fault("BACKEND_FAULT", "alloc_null");
    const std::string message = error_of([] { faulty_empty(8); });
    CHECK(contains(message,
                   "backend 'bad-backend-faults' (plugin bad-backend-faults) reported allocating 32 bytes "
                   "but returned no memory (NULL)"));
  }
  {
    const ScopedEnv fault("BACKEND_FAULT", "alloc_throws");
    const std::string message = error_of([] { faulty_empty(8); });
    CHECK(contains(
        message,
        "could not allocate 32 bytes: alloc threw: bad-backend-faults: the device is out of memory"));
  }
  CHECK(faulty_empty(8).numel() == 8);  // and without the fault it allocates
}

TEST_CASE("a backend's copy that throws is an error naming it, and the tensor is still there") {
  const ResetAndUnload cleanup({kBackend});
  load_faulty();
  const ts::Tensor t = faulty_empty(4);
  {
    const ScopedEnv fault("BACKEND_FAULT", "copy_throws");
    const std::string message = error_of([&] { t.to_vector<float>(); });
    CHECK(contains(message,
                   "backend 'bad-backend-faults' (plugin bad-backend-faults) could not copy 16 bytes: copy "
                   "threw: bad-backend-faults: the copy engine hung"));
  }
  CHECK(t.to_vector<float>().size() == 4);
}

TEST_CASE("a backend's free or set_num_threads that throws is logged, and the host carries on") {
  const ResetAndUnload cleanup({kBackend});
  load_faulty();
  {
    const ScopedEnv fault("BACKEND_FAULT", "free_throws");
    for (int i = 0; i < 3; ++i) {
      const ts::Tensor t = faulty_empty(16);  // freed at the end of each turn: the exception is caught
      CHECK(t.numel() == 16);
    }
  }
  {
    const ScopedEnv fault("BACKEND_FAULT", "threads_throws");
    ts::Config config;
    config.threads = 2;
    ts::configure(config);  // every backend is told the thread count: a log line, no error
    ts::configure(ts::Config{});
  }
  CHECK(faulty_empty(4).to_vector<float>().size() == 4);
}
