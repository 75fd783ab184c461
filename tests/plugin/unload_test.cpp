// Unloading plugins that are still in use: a backend reloaded while its tensors live is the same
// backend (old and new tensors mix); a backend of the same name from another file is a different
// one, and the error says which files; an algorithm the user's rules name warns at unload and fails
// the next collective that would use it, rather than silently running another algorithm; a kernel
// that fails without a message says "no message", not stack garbage.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "plugin_test_support.hpp"

using namespace plugin_test;
namespace ts = tessera;
namespace fs = std::filesystem;

namespace {

// Captures what is written to stderr (where the tessera logger writes) while it lives.
class StderrCapture {
 public:
  StderrCapture()
      : file_(fs::temp_directory_path() / ("tessera-stderr-" + std::to_string(getpid()) + ".txt")) {
    std::fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    const int fd = open(file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  ~StderrCapture() { restore(); }
  std::string text() {
    restore();
    std::ifstream in(file_);
    std::stringstream content;
    content << in.rdbuf();
    return content.str();
  }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    saved_ = -1;
  }
  fs::path file_;
  int saved_ = -1;
};

ts::Tensor distinct_inputs() {
  std::vector<std::pair<int, ts::Tensor>> shards;
  for (int r = 0; r < 4; ++r) shards.emplace_back(r, ts::arange(6).to(ts::kFloat64) + 100.0 * r);
  return ts::local_tensor(ts::RankMap<ts::Tensor>(shards));
}

}  // namespace

TEST_CASE("a backend unloaded and loaded again is the same backend to the tensors made before") {
  tessera::load_plugin("backend-cpu");
  const ts::Tensor before = ts::from_values<float>({1, 2}, {2});
  tessera::unload_plugin("backend-cpu");
  tessera::load_plugin("backend-cpu");
  const ts::Tensor after = ts::from_values<float>({10, 20}, {2});
  // Was: "add: tensors are on different backends ('cpu' and 'cpu')".
  CHECK((before + after).to_vector<float>() == std::vector<float>{11, 22});
  ts::Tensor target = ts::zeros({2});
  target.copy_(before);
  CHECK(target.to_vector<float>() == std::vector<float>{1, 2});
  CHECK(ts::local_tensor({{0, before}, {1, after}}).shard(1).to_vector<float>() ==
        std::vector<float>{10, 20});
}

TEST_CASE("a backend of the same name from another file is another backend, and the error names both files") {
  tessera::load_plugin("backend-cpu");
  const fs::path original = fs::weakly_canonical(TESSERA_CPU_PLUGIN_FILE);
  const fs::path dir = fs::temp_directory_path() / ("tessera-cpu-copy-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path copy = dir / original.filename();
  fs::copy_file(original, copy, fs::copy_options::overwrite_existing);

  const ts::Tensor old_cpu = ts::from_values<float>({1, 2}, {2});
  tessera::unload_plugin("backend-cpu");
  tessera::load_plugin(copy.string());
  const ts::Tensor new_cpu = ts::from_values<float>({10, 20}, {2});
  const std::string message = error_of([&] { (void)(old_cpu + new_cpu); });
  CAPTURE(message);
  CHECK(contains(message, "tensors are on two different backends named 'cpu'"));
  CHECK(contains(message, original.string()));
  CHECK(contains(message, fs::weakly_canonical(copy).string()));

  tessera::unload_plugin("backend-cpu");
  tessera::load_plugin(original.string());
  check_cpu_still_works();
  fs::remove_all(dir);
}

TEST_CASE("unloading an algorithm the rules name warns, and the next collective it would run fails") {
  ts::dist::algorithm_names();  // loads every coll-* plugin
  const std::string saved = ts::dist::algorithms();
  ts::dist::set_algorithms("all_reduce:ring;*:direct");
  std::string warning;
  {
    StderrCapture capture;
    tessera::unload_plugin("coll-ring");
    warning = capture.text();
  }
  CAPTURE(warning);
  CHECK(contains(warning,
                 "unloaded plugin 'coll-ring', but the collective rules in force name its algorithms "
                 "(all_reduce:ring)"));

  // Was: the all_reduce silently ran the direct algorithm.
  ts::Tensor t = distinct_inputs();
  const ts::Tensor before = t.clone();
  const std::string message = error_of([&] { ts::dist::all_reduce(t, ts::ReduceOp::SUM); });
  CAPTURE(message);
  CHECK(contains(message, "the rule 'all_reduce:ring' in force names algorithm 'ring', which is not loaded"));
  CHECK(ts::equal(t, before));

  // Other collectives follow their own rules; loading the plugin again brings the rule back.
  ts::Tensor g = distinct_inputs();
  ts::dist::broadcast(g, 2);
  CHECK(g.shard(0).to_vector<double>() == std::vector<double>{200, 201, 202, 203, 204, 205});
  tessera::load_plugin("coll-ring");
  CHECK(ts::dist::algorithm_for("all_reduce", 4, 48) == "ring");
  ts::dist::all_reduce(t, ts::ReduceOp::SUM);
  CHECK(t.shard(3).to_vector<double>() == std::vector<double>{600, 604, 608, 612, 616, 620});
  ts::dist::set_algorithms(saved);
}

TEST_CASE("unloading an algorithm no rule names says nothing") {
  ts::dist::algorithm_names();
  const std::string saved = ts::dist::algorithms();
  ts::dist::set_algorithms("*:direct");
  std::string warning;
  {
    StderrCapture capture;
    tessera::unload_plugin("coll-bruck");
    warning = capture.text();
  }
  CHECK(warning.empty());
  tessera::load_plugin("coll-bruck");
  ts::dist::set_algorithms(saved);
}

TEST_CASE("a kernel that fails without a message says so, not stack garbage") {
  tessera::load_plugin(test_plugin("bad-silent-failure").string());
  const std::string message =
      error_of([] { (void)ts::full({2}, 1.0f, ts::TensorOptions().backend("bad-silent-failure")); });
  CAPTURE(message);
  CHECK(contains(
      message, "fill (float32) on backend 'bad-silent-failure' failed with status 5 (INTERNAL): no message"));
  check_cpu_still_works();
}
