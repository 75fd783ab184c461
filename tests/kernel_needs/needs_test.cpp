// What each user call needs of a backend (sdk/KERNELS.md, "What each call needs"): on a backend
// with exactly the listed kernels the call works; with any one of them missing it fails with an
// error naming the missing op and the call. The lists below are this test's own; the document and
// the core's copy (dispatch/call_needs.cpp, used by `tessera plugins --verbose`) must agree with them.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

#include "dispatch/call_needs.hpp"

namespace ts = tessera;
namespace fs = std::filesystem;

namespace {

struct Case {
  std::string call;     // as the error names it
  std::string variant;  // "" or the reduce op
  std::vector<std::string> ops;
  std::function<void()> run;  // the call on tensors of the "cpu2" backend
};

// Float operands with distinct values, moved onto the restricted backend (moving uses no kernel).
// (The arithmetic runs on cpu: only the call under test may use the "cpu2" backend's kernels.)
ts::Tensor floats(float shift = 0.f) { return (ts::arange(6, ts::kFloat32) * 0.5f - 1.f + shift).to("cpu2"); }
ts::Tensor ranks_of(ts::DType dtype) {
  return ts::rank_map(
      [dtype](int r) { return (ts::arange(5, ts::kInt64) + 3 * r + 1).to(dtype).to("cpu2"); });
}

void all_reduce(ts::DType dtype, ts::ReduceOp op) {
  ts::LocalMode mode(3);
  ts::Tensor t = ranks_of(dtype);
  ts::dist::all_reduce(t, op);
}

std::vector<Case> cases() {
  return {
      {"printing a tensor (Tensor::to_string, operator<<)",
       "",
       {"cast"},
       [] {
         std::ostringstream os;
         os << floats();
       }},
      {"to_vector", "", {"cast"}, [] { (void)floats().to_vector<double>(); }},
      {"item", "", {}, [] { (void)ts::tensor(2.5f).to("cpu2").item<double>(); }},
      {"ts::equal", "", {"eq", "all"}, [] { (void)ts::equal(floats(), floats()); }},
      {"ts::allclose",
       "",
       {"sub", "abs", "mul", "add", "le", "eq", "fill", "maximum", "all"},
       [] { (void)ts::allclose(floats(), floats(1e-6f)); }},
      {"ts::dist::all_reduce", "SUM", {"add"}, [] { all_reduce(ts::kFloat32, ts::ReduceOp::SUM); }},
      {"ts::dist::all_reduce",
       "AVG",
       {"add", "div", "fill"},
       [] { all_reduce(ts::kFloat32, ts::ReduceOp::AVG); }},
      {"ts::dist::all_reduce",
       "PREMUL_SUM",
       {"add", "mul", "fill"},
       [] { all_reduce(ts::kFloat32, ts::ReduceOp::premul_sum(0.5)); }},
      {"ts::dist::all_reduce", "PRODUCT", {"mul"}, [] { all_reduce(ts::kFloat32, ts::ReduceOp::PRODUCT); }},
      {"ts::dist::all_reduce", "MIN", {"minimum"}, [] { all_reduce(ts::kFloat32, ts::ReduceOp::MIN); }},
      {"ts::dist::all_reduce", "MAX", {"maximum"}, [] { all_reduce(ts::kFloat32, ts::ReduceOp::MAX); }},
      {"ts::dist::all_reduce", "BAND", {"bitwise_and"}, [] { all_reduce(ts::kInt64, ts::ReduceOp::BAND); }},
      {"ts::dist::all_reduce", "BOR", {"bitwise_or"}, [] { all_reduce(ts::kInt64, ts::ReduceOp::BOR); }},
      {"ts::dist::all_reduce", "BXOR", {"bitwise_xor"}, [] { all_reduce(ts::kInt64, ts::ReduceOp::BXOR); }},
      {"ts::dist::broadcast",
       "",
       {},
       [] {
         ts::LocalMode mode(3);
         ts::Tensor t = ranks_of(ts::kFloat32);
         ts::dist::broadcast(t, 1);
       }},
      {"ts::dist::all_gather_into_tensor",
       "",
       {},
       [] {
         ts::LocalMode mode(3);
         ts::Tensor out = ts::rank_map(
             [](int) { return ts::empty({15}, ts::TensorOptions(ts::kFloat32).backend("cpu2")); });
         ts::dist::all_gather_into_tensor(out, ranks_of(ts::kFloat32));
       }},
      // The transformer ops composed of other kernels.
      {"ts::silu", "", {"sigmoid", "mul"}, [] { (void)ts::silu(floats()); }},
      {"ts::gelu", "tanh", {"mul", "add", "tanh", "fill"}, [] { (void)ts::gelu(floats(), "tanh"); }},
      {"ts::rsqrt", "", {"sqrt", "div", "fill"}, [] { (void)ts::rsqrt(floats(2.f)); }},
      {"ts::clamp",
       "",
       {"ge", "le", "ne", "maximum", "where", "fill"},
       [] { (void)ts::clamp(floats(), -0.5, 0.5); }},
      {"ts::masked_fill",
       "",
       {"where", "fill"},
       [] {
         (void)ts::masked_fill(floats(), ts::tensor({true, false, true, false, false, true}).to("cpu2"), 9.0);
       }},
      {"ts::tril",
       "",
       {"arange", "sub", "le", "where", "fill"},
       [] {
         (void)ts::tril(floats().reshape({2, 3}));
       }},
      {"ts::triu",
       "",
       {"arange", "sub", "ge", "where", "fill"},
       [] {
         (void)ts::triu(floats().reshape({2, 3}), 1);
       }},
      {"ts::layer_norm",
       "",
       {"mean", "sub", "mul", "add", "sqrt", "div", "fill"},
       [] {
         const ts::Tensor w = ts::tensor({0.5f, 1.f, 2.f}).to("cpu2");
         (void)ts::layer_norm(floats().reshape({2, 3}), {3}, w, w);
       }},
      {"ts::rms_norm",
       "",
       {"mul", "mean", "add", "sqrt", "div", "fill"},
       [] {
         (void)ts::rms_norm(floats().reshape({2, 3}), {3}, ts::tensor({0.5f, 1.f, 2.f}).to("cpu2"));
       }},
      {"ts::layer_norm",
       "fused",
       {"layer_norm", "layer_norm_backward"},
       [] {
         const ts::Tensor w = ts::tensor({0.5f, 1.f, 2.f}).to("cpu2");
         (void)ts::layer_norm(floats().reshape({2, 3}), {3}, w, w);
       }},
      {"ts::rms_norm",
       "fused",
       {"rms_norm", "rms_norm_backward"},
       [] {
         (void)ts::rms_norm(floats().reshape({2, 3}), {3}, ts::tensor({0.5f, 1.f, 2.f}).to("cpu2"));
       }},
  };
}

std::string joined(const std::vector<std::string>& ops) {
  std::string text;
  for (const std::string& op : ops) text += (text.empty() ? "" : ",") + op;
  return text;
}

// Loads a fresh copy of the "cpu2" backend holding only `ops` (the previous one is unloaded first).
void use_backend_with(const std::vector<std::string>& ops) {
  static int copies = 0;
  for (const ts::PluginInfo& info : ts::loaded_plugins())
    if (info.name == "backend-cpu2") ts::unload_plugin("backend-cpu2");
  const fs::path dir = fs::temp_directory_path() / ("tessera-needs-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path copy = dir / ("libtessera-backend-cpu2-" + std::to_string(copies++) + ".so");
  fs::copy_file(TESSERA_NEEDS_PLUGIN_FILE, copy, fs::copy_options::overwrite_existing);
  // An empty list must still keep nothing: a lone comma matches no op.
  ::setenv("TESSERA_TEST_KEEP_KERNELS", ops.empty() ? "," : joined(ops).c_str(), 1);
  ts::load_plugin(copy.string());
  fs::remove(copy);  // the loaded library stays mapped
}

std::string failure_of(const std::function<void()>& run) {
  try {
    run();
  } catch (const ts::Error& e) {
    return e.what();
  }
  return "";
}

// sdk/KERNELS.md's "What each call needs" items, "- `call` (VARIANT): `op`, `op` (notes)": call
// and variant -> the ops in backquotes before the notes.
std::map<std::string, std::vector<std::string>> documented_needs() {
  std::ifstream file(TESSERA_KERNEL_CATALOGUE);
  REQUIRE(file.good());
  std::map<std::string, std::vector<std::string>> items;
  bool in_section = false;
  for (std::string line; std::getline(file, line);) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## What each call needs";
    if (!in_section) continue;
    if (line.rfind("- `", 0) == 0) {
      std::string ops_text;
      const size_t call_end = line.find('`', 3);
      const size_t colon = line.find(':', call_end);
      REQUIRE(colon != std::string::npos);
      std::string variant;
      if (const size_t open = line.find('(', call_end); open < colon)
        variant = line.substr(open + 1, line.find(')', open) - open - 1);
      const std::string key = line.substr(3, call_end - 3) + "|" + variant;
      ops_text = line.substr(colon + 1);
      // Ops are the backquoted words before the notes' '('.
      if (const size_t notes = ops_text.find('('); notes != std::string::npos) ops_text.erase(notes);
      std::vector<std::string>& ops = items[key];
      for (size_t at = ops_text.find('`'); at != std::string::npos; at = ops_text.find('`', at + 1)) {
        const size_t end = ops_text.find('`', at + 1);
        ops.push_back(ops_text.substr(at + 1, end - at - 1));
        at = end;
      }
    }  // other lines are notes (continuations, the paragraphs around the list)
  }
  return items;
}

}  // namespace

TEST_CASE("each call works on a backend holding exactly the kernels it needs") {
  for (const Case& c : cases()) {
    CAPTURE(c.call);
    CAPTURE(c.variant);
    use_backend_with(c.ops);
    CHECK(failure_of(c.run) == "");
  }
}

TEST_CASE("each call fails without any one of its kernels, naming the op and the call") {
  for (const Case& c : cases())
    for (const std::string& missing : c.ops) {
      CAPTURE(c.call);
      CAPTURE(c.variant);
      CAPTURE(missing);
      std::vector<std::string> fewer = c.ops;
      fewer.erase(std::find(fewer.begin(), fewer.end(), missing));
      use_backend_with(fewer);
      const std::string message = failure_of(c.run);
      CAPTURE(message);
      // Half a fused pair is not used: the call falls back to the composite, whose first missing
      // kernel is the one named.
      const std::string named = c.variant == "fused" ? "" : "op '" + missing + "' ";
      CHECK(message.find(named + "has no kernel") != std::string::npos);
      CHECK(message.find("on backend 'cpu2'") != std::string::npos);
      CHECK(message.find(c.call + " needs it") != std::string::npos);
    }
}

TEST_CASE("sdk/KERNELS.md and the core's list say what this test found") {
  std::map<std::string, std::vector<std::string>> expected;
  for (const Case& c : cases()) expected[c.call + "|" + c.variant] = c.ops;
  std::map<std::string, std::vector<std::string>> documented = documented_needs();
  std::map<std::string, std::vector<std::string>> core;
  for (const ts::dispatch::CallNeeds& needs : ts::dispatch::call_needs())
    core[std::string(needs.call) + "|" + std::string(needs.variant)] =
        std::vector<std::string>(needs.ops.begin(), needs.ops.end());
  // Kernels only some dtypes need (cast for integer allclose, copy for strided views) are listed
  // too; this test runs contiguous float and integer operands, so it checks the others are there.
  for (auto& [key_bound, ops] : expected) {
    const auto& key = key_bound;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(key);
    REQUIRE(documented.count(key) == 1);
    REQUIRE(core.count(key) == 1);
    for (const std::string& op : ops) {
      CHECK(std::count(documented[key].begin(), documented[key].end(), op) == 1);
      CHECK(std::count(core[key].begin(), core[key].end(), op) == 1);
    }
    CHECK(documented[key] == core[key]);
  }
  CHECK(documented.size() == expected.size());
  CHECK(core.size() == expected.size());
}

// The norms' other way (sdk/KERNELS.md, "Normalisation"): a backend holding a fused pair computes
// the op (and its gradient) with it alone, besides the copy the autograd engine makes of a leaf's
// gradient; one holding only half of a pair is not offered it, and the composite's kernels serve
// the call.
TEST_CASE("layer_norm and rms_norm: the fused pair alone serves them, half a pair does not") {
  auto layer = [] {
    const ts::Tensor w = ts::tensor({0.5f, 1.f, 2.f}).to("cpu2").requires_grad_(true);
    const ts::Tensor b = ts::tensor({0.5f, 1.f, 2.f}).to("cpu2").requires_grad_(true);
    const ts::Tensor x = floats().reshape({2, 3}).requires_grad_(true);
    const ts::Tensor y = ts::layer_norm(x, {3}, w, b);
    y.backward(y.detach());  // a weighting that is not constant along a row
  };
  auto rms = [] {
    const ts::Tensor w = ts::tensor({0.5f, 1.f, 2.f}).to("cpu2").requires_grad_(true);
    const ts::Tensor y = ts::rms_norm(floats().reshape({2, 3}), {3}, w);
    y.backward(y.detach());
  };
  use_backend_with({"layer_norm", "layer_norm_backward", "copy"});
  CHECK(failure_of(layer) == "");
  use_backend_with({"rms_norm", "rms_norm_backward", "copy"});
  CHECK(failure_of(rms) == "");
  // The forward kernel without its backward: the composite runs, and names what it lacks.
  use_backend_with({"rms_norm", "mean", "add", "sqrt", "div", "fill"});
  const std::string message = failure_of([] { (void)ts::rms_norm(floats().reshape({2, 3}), {3}); });
  CHECK(message.find("op 'mul' has no kernel") != std::string::npos);
}
