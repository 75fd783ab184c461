#include "memory_checks.hpp"

#include <cstdint>

#include <fmt/format.h>
#include <tessera/errors.hpp>
#include <tessera/factories.hpp>

namespace conformance {

namespace ts = tessera;

namespace {

constexpr ts::DType kAllDTypes[] = {ts::kBool, ts::kInt32, ts::kInt64, ts::kFloat32, ts::kFloat64};

// backend.h: alloc returns memory aligned to at least 64 bytes (0 bytes may give no pointer).
void check_allocation(Context& context) {
  const std::string group = "alloc (0 bytes, large, 64-byte alignment)";
  int cases = 0;
  try {
    for (ts::DType dtype : kAllDTypes) {
      for (const ts::Shape& shape :
           {ts::Shape{0}, ts::Shape{3, 0}, ts::Shape{1}, ts::Shape{7, 5}, ts::Shape{1 << 20}}) {
        const ts::Tensor t = ts::empty(shape, ts::TensorOptions(dtype).backend(context.backend));
        ++cases;
        if (t.backend() != context.backend || t.sizes() != shape || t.dtype() != dtype) {
          context.report.fail(
              group, fmt::format("empty({} elements, {}) came back on backend '{}' with dtype {}", t.numel(),
                                 ts::dtype_name(dtype), t.backend(), ts::dtype_name(t.dtype())));
          return;
        }
        const auto address = reinterpret_cast<std::uintptr_t>(t.data_ptr());
        if (address % 64 != 0) {
          context.report.fail(
              group, fmt::format("empty({} elements, {}) is at {:#x}, not aligned to 64 bytes", t.numel(),
                                 ts::dtype_name(dtype), address));
          return;
        }
      }
    }
  } catch (const std::exception& e) {
    context.report.fail(group, fmt::format("case {}: error: {}", cases, e.what()));
    return;
  }
  context.report.pass(group, cases);
}

// Host -> device -> host round trips through the backends' memory functions only (no kernel of the
// tested backend): contiguous tensors, host-side views (the move copies the strided tensor) and a
// large one. A moved tensor must be on the backend and contiguous.
ts::Tensor moved_to(const ts::Tensor& t, const std::string& backend) {
  // to() of a tensor already there is the tensor itself, view or not (the oracle's side).
  if (t.backend() == backend) return t;
  ts::Tensor moved = t.to(backend);
  if (moved.backend() != backend || !moved.is_contiguous())
    throw ts::Error(fmt::format("to('{}') gave a tensor on backend '{}', contiguous: {}", backend,
                                moved.backend(), moved.is_contiguous()));
  return moved;
}

void check_transfers(Context& context, ts::DType dtype) {
  const std::string group = fmt::format("transfer {} (host <-> device)", ts::dtype_name(dtype));
  const std::string oracle = context.oracle;
  CaseGroup cases;
  for (const Layout& layout : all_layouts())
    cases.cases.push_back(
        {"round trip of " + layout.name,
         {context.values.make(layout.base, dtype, ts::is_floating(dtype) ? Domain::kWide : Domain::kSpecial)},
         [oracle, view = layout.view](const std::vector<ts::Tensor>& in, const std::string& backend) {
           // Back to the host, the view made there, and the view moved to the device.
           return moved_to(view(moved_to(in[0], oracle)), backend);
         }});
  // 4 Mi elements: large enough to cross any small-block path of an allocator or copy engine.
  cases.cases.push_back({"round trip of 4Mi elements",
                         {context.values.make({1 << 22}, dtype, Domain::kWide)},
                         [](const std::vector<ts::Tensor>& in, const std::string& backend) {
                           return moved_to(in[0], backend);
                         }});
  run_group(context, group, "", dtype, cases);
}

}  // namespace

void check_memory(Context& context) {
  check_allocation(context);
  for (ts::DType dtype : kAllDTypes) check_transfers(context, dtype);
}

}  // namespace conformance
