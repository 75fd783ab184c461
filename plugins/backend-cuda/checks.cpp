#include "checks.hpp"

#include "tessera/sdk/cpp/strided_loop.hpp"

namespace tessera::cuda {

void fail(const std::string& message) { throw sdk::Error(TESSERA_INVALID_ARGUMENT, message); }

std::string dtype_name(DLDataType dtype) {
  if (sdk::same_dtype(dtype, sdk::kFloat32)) return "float32";
  if (sdk::same_dtype(dtype, sdk::kFloat64)) return "float64";
  if (sdk::same_dtype(dtype, sdk::kInt32)) return "int32";
  if (sdk::same_dtype(dtype, sdk::kInt64)) return "int64";
  if (sdk::same_dtype(dtype, sdk::kBool)) return "bool";
  return "{code " + std::to_string(dtype.code) + ", bits " + std::to_string(dtype.bits) + ", lanes " +
         std::to_string(dtype.lanes) + "}";
}

std::string shape_text(const DLTensor& t) {
  std::string text = "[";
  for (int d = 0; d < t.ndim; ++d) text += (d == 0 ? "" : ", ") + std::to_string(t.shape[d]);
  return text + "]";
}

void expect_sane(const char* op, const char* role, size_t index, const DLTensor& t) {
  const auto who = [&] { return std::string(op) + ": " + role + " " + std::to_string(index); };
  if (t.ndim < 0 || t.ndim > kMaxDeviceNdim)
    fail(who() + " has ndim " + std::to_string(t.ndim) + ", expected 0.." + std::to_string(kMaxDeviceNdim) +
         " (the most dims the CUDA backend passes to a kernel)");
  if (t.ndim > 0 && (t.shape == nullptr || t.strides == nullptr))
    fail(who() + " has a NULL shape or strides, expected both set");
  bool empty = false;
  for (int d = 0; d < t.ndim; ++d) {
    if (t.shape[d] < 0)
      fail(who() + " has negative size " + std::to_string(t.shape[d]) + " in dim " + std::to_string(d));
    empty = empty || t.shape[d] == 0;
  }
  if (t.data == nullptr && !empty) fail(who() + " has NULL data but " + std::to_string(sdk::numel(t)) + " elements");
}

void expect_arity(const sdk::KernelArgs& args, const char* op, size_t inputs, size_t outputs) {
  if (args.num_inputs() != inputs || args.num_outputs() != outputs)
    fail(std::string(op) + ": got " + std::to_string(args.num_inputs()) + " inputs and " +
         std::to_string(args.num_outputs()) + " outputs, expected " + std::to_string(inputs) + " and " +
         std::to_string(outputs));
  for (size_t i = 0; i < inputs; ++i) expect_sane(op, "input", i, args.input(i));
  for (size_t i = 0; i < outputs; ++i) expect_sane(op, "output", i, args.output(i));
}

void expect_dtype(const char* op, const char* role, const DLTensor& t, DLDataType expected) {
  if (!sdk::same_dtype(t.dtype, expected))
    fail(std::string(op) + ": " + role + " has dtype " + dtype_name(t.dtype) + ", expected " + dtype_name(expected));
}

void expect_ndim(const char* op, const char* role, const DLTensor& t, int expected) {
  if (t.ndim != expected)
    fail(std::string(op) + ": " + role + " has ndim " + std::to_string(t.ndim) + " (shape " + shape_text(t) +
         "), expected " + std::to_string(expected));
}

void expect_shape(const char* op, const char* role, const DLTensor& t, const DLTensor& like, const char* like_role) {
  bool same = t.ndim == like.ndim;
  for (int d = 0; same && d < t.ndim; ++d) same = t.shape[d] == like.shape[d];
  if (!same)
    fail(std::string(op) + ": " + role + " has shape " + shape_text(t) + ", expected " + shape_text(like) +
         " (the shape of " + like_role + ")");
}

void expect_dim(const char* op, const char* role, const DLTensor& t, int dim, int64_t expected, const char* why) {
  if (t.shape[dim] != expected)
    fail(std::string(op) + ": " + role + " has shape " + shape_text(t) + ", expected size " +
         std::to_string(expected) + " in dim " + std::to_string(dim) + " (" + why + ")");
}

void expect_contiguous(const char* op, const char* role, const DLTensor& t) {
  if (sdk::is_contiguous(t)) return;
  std::string strides = "[";
  for (int d = 0; d < t.ndim; ++d) strides += (d == 0 ? "" : ", ") + std::to_string(t.strides[d]);
  fail(std::string(op) + ": " + role + " with shape " + shape_text(t) + " has strides " + strides +
       "], expected a contiguous row-major tensor");
}

int64_t int_attr(const sdk::KernelArgs& args, const char* op, const char* name) {
  try {
    return args.int_attr(name);
  } catch (const sdk::Error& e) {
    fail(std::string(op) + ": " + e.what() + ", expected an INT attribute");
  }
}

double float_attr(const sdk::KernelArgs& args, const char* op, const char* name) {
  try {
    return args.float_attr(name);
  } catch (const sdk::Error& e) {
    fail(std::string(op) + ": " + e.what() + ", expected a FLOAT (or INT) attribute");
  }
}

}  // namespace tessera::cuda
