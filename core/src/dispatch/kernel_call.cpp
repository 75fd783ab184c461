#include "dispatch/kernel_call.hpp"

#include <fmt/format.h>

#include <array>
#include <optional>
#include <span>

#include "plugin/guarded_call.hpp"
#include "plugin/validation.hpp"
#include "tessera/errors.hpp"

namespace tessera::dispatch {
namespace {

constexpr size_t kMaxOperands = 8;
constexpr size_t kMaxAttrs = 8;

DLTensor to_dltensor(const Operand& o) {
  DLTensor dl;
  dl.data = o.access->data(o.buffer);  // throws when the bytes were released
  dl.device = {static_cast<DLDeviceType>(o.backend->device_type()), 0};
  dl.ndim = o.ndim;
  dl.dtype = to_dl(o.dtype);
  dl.shape = const_cast<int64_t*>(o.sizes);  // DLTensor's fields are not const; kernels only read them
  dl.strides = const_cast<int64_t*>(o.strides);
  dl.byte_offset = static_cast<uint64_t>(o.buffer_offset + o.offset) * (dl.dtype.bits / 8u);  // itemsize
  return dl;
}

[[noreturn]] void throw_different_backends(std::string_view op, const Backend& a, const Backend& b) {
  // Two backends of one name come from two different files (a reload of the same file gives the
  // same backend): the files are what tells them apart.
  if (a.name() == b.name())
    throw Error(
        fmt::format("{}: tensors are on two different backends named '{}', one from {} and one from {}; move "
                    "them to one first",
                    op, a.name(), a.plugin().info().file.string(), b.plugin().info().file.string()));
  throw Error(fmt::format("{}: tensors are on different backends ('{}' and '{}'); move them to one first", op,
                          a.name(), b.name()));
}

// Called inside the handler of an exception that escaped a kernel: only its text leaves here (the
// exception object, whose code may live in the plugin, dies with the handler).
[[noreturn]] [[gnu::cold]] void throw_kernel_threw(std::string_view op, DType key, const Backend& backend) {
  const std::string escaped = plugin::exception_escaping("the kernel", [] { throw; });
  throw Error(fmt::format("{} ({}) on backend '{}' of plugin '{}' ({}): {}", op, dtype_name(key),
                          backend.name(), backend.plugin().info().name, backend.plugin().info().file.string(),
                          escaped));
}

void call_with(std::string_view op, DType key, tessera_kernel_fn fn, std::span<const Operand> inputs,
               std::span<const Operand> outputs, std::span<const Attr> attrs);

// The dtype whose kernel computes an op on `narrow` when a backend has none for `narrow` itself:
// bfloat16 and float16 compute in float32 (what PyTorch's CPU kernels do: one rounding per
// result); int8 and uint8 in int64, whose wrapping +, -, * (and with them sums, products and
// matrix products) agree with the narrow type's modulo 2^8 once narrowed back, and whose
// comparisons, maxima and bitwise ops are exact.
std::optional<DType> widened(DType narrow) {
  if (is_reduced_float(narrow)) return kFloat32;
  if (narrow == kInt8 || narrow == kUInt8) return kInt64;
  return std::nullopt;
}

// Runs (op, wide) in place of (op, narrow): every input of dtype `narrow` is cast into a fresh
// `wide` tensor, every such output gets a fresh `wide` tensor (kernels write their outputs and
// never read them; an output that aliases an input is that input's cast copy on the way in), and
// the wide outputs are cast back into the real ones: one rounding per result. Operands of other
// dtypes (indices, masks, an int64 sum) pass through as they are. One place for every op, so each
// op a backend implements for float32 (int64) works on the narrow types with the same order of
// operations.
void call_widened(std::string_view op, DType narrow, DType wide, tessera_kernel_fn fn,
                  std::span<const Operand> inputs, std::span<const Operand> outputs,
                  std::span<const Attr> attrs) {
  std::array<std::shared_ptr<const void>, 2 * kMaxOperands> temporaries;
  std::array<Operand, kMaxOperands> wide_inputs;
  std::array<Operand, kMaxOperands> wide_outputs;
  size_t made = 0;
  const auto widen = [&](const Operand& o, bool read) {
    if (o.dtype != narrow) return o;
    Operand converted{};
    temporaries[made++] = o.access->fresh(o.buffer, {o.sizes, static_cast<size_t>(o.ndim)}, wide, converted);
    if (read) call_kernel("cast", narrow, {o}, {converted});
    return converted;
  };
  for (size_t i = 0; i < inputs.size(); ++i) wide_inputs[i] = widen(inputs[i], true);
  for (size_t i = 0; i < outputs.size(); ++i) wide_outputs[i] = widen(outputs[i], false);
  call_with(op, wide, fn, {wide_inputs.data(), inputs.size()}, {wide_outputs.data(), outputs.size()}, attrs);
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].dtype == narrow) call_kernel("cast", wide, {wide_outputs[i]}, {outputs[i]});
}

}  // namespace

void call_kernel(std::string_view op, DType key, std::initializer_list<Operand> inputs,
                 std::initializer_list<Operand> outputs, std::initializer_list<Attr> attrs) {
  call_kernel(op, key, std::span<const Operand>(inputs.begin(), inputs.size()),
              std::span<const Operand>(outputs.begin(), outputs.size()),
              std::span<const Attr>(attrs.begin(), attrs.size()));
}

void call_kernel(std::string_view op, DType key, std::span<const Operand> inputs,
                 std::span<const Operand> outputs, std::span<const Attr> attrs) {
  if (inputs.size() > kMaxOperands || outputs.size() > kMaxOperands || attrs.size() > kMaxAttrs)
    throw Error(fmt::format("internal: kernel '{}' called with too many operands or attributes", op));
  const Operand& first = outputs.size() > 0 ? *outputs.begin() : *inputs.begin();
  const Backend& backend = *first.backend;
  for (const Operand& o : inputs)
    if (o.backend != &backend) throw_different_backends(op, *o.backend, backend);
  for (const Operand& o : outputs)
    if (o.backend != &backend) throw_different_backends(op, *o.backend, backend);
  if (const tessera_kernel_fn fn = backend.find_kernel(op, key)) [[likely]]
    return call_with(op, key, fn, inputs, outputs, attrs);
  // cast and copy are what widening is made of: a backend must have them for the dtype itself.
  const std::optional<DType> wide = widened(key);
  if (wide && op != "cast" && op != "copy") {
    if (const tessera_kernel_fn fn = backend.find_kernel(op, *wide))
      return call_widened(op, key, *wide, fn, inputs, outputs, attrs);
  }
  backend.kernel(op, key);  // throws the error naming the op, the dtype and the backend
}

namespace {

void call_with(std::string_view op, DType key, tessera_kernel_fn fn, std::span<const Operand> inputs,
               std::span<const Operand> outputs, std::span<const Attr> attrs) {
  const Backend& backend = *(outputs.size() > 0 ? outputs.front() : inputs.front()).backend;

  // Outputs first get bytes of their own (copy-on-write of shared replicas), so inputs that alias
  // them are described with the bytes the kernel will actually write.
  for (const Operand& o : outputs) o.access->prepare_write(o.buffer);

  // Only the first inputs.size() (outputs.size(), attrs.size()) entries are filled and passed on;
  // the rest stay uninitialised rather than zeroed on every call.
  std::array<DLTensor, kMaxOperands> in;
  std::array<DLTensor, kMaxOperands> out;
  size_t n = 0;
  for (const Operand& o : inputs) in[n++] = to_dltensor(o);  // all on `backend`: call_kernel checked
  n = 0;
  for (const Operand& o : outputs) out[n++] = to_dltensor(o);

  std::array<tessera_attr, kMaxAttrs> attr_values;
  std::array<const tessera_attr*, kMaxAttrs> attr_pointers;
  n = 0;
  for (const Attr& a : attrs) {
    attr_values[n] = {sizeof(tessera_attr), a.name,        a.kind,       a.int_value,
                      a.float_value,        a.ints.data(), a.ints.size()};
    attr_pointers[n] = &attr_values[n];
    ++n;
  }

  tessera_kernel_call call{};
  call.struct_size = sizeof(call);
  call.inputs = in.data();
  call.num_inputs = inputs.size();
  call.outputs = out.data();
  call.num_outputs = outputs.size();
  call.attrs = attr_pointers.data();
  call.num_attrs = attrs.size();

  tessera_error error;
  clear_error(error);
  tessera_status status;
  try {  // free when nothing is thrown
    status = fn(backend.context(), &call, &error);
  } catch (...) {
    throw_kernel_threw(op, key, backend);
  }
  if (status != TESSERA_OK) {
    throw Error(fmt::format("{} ({}) on backend '{}' failed with status {}: {}", op, dtype_name(key),
                            backend.name(), plugin::status_text(status), plugin::error_text(error)));
  }
}

}  // namespace
}  // namespace tessera::dispatch
