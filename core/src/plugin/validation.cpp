#include "plugin/validation.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tessera/sdk/version.h"

namespace tessera::plugin {
namespace {

// sdk/KERNELS.md's op names (kernel_catalogue_test.cpp reads the document and compares), in its
// order but for the folds and the SDK 1.6 and 1.7 ops: each minor's additions come after the older ones, so
// that the catalogue of an older plugin is a prefix.
constexpr size_t kOpsBeforeFolds = 46;
constexpr uint32_t kFoldsMinor = 4;
constexpr size_t kOpsBefore16 = kOpsBeforeFolds + 7;
constexpr uint32_t kMinor16 = 6;
constexpr size_t kOpsBefore17 = kOpsBefore16 + 6;
constexpr uint32_t kMinor17 = 7;
constexpr std::array<std::string_view, kOpsBefore17 + 4> kCatalogue = {
    "add", "sub", "mul", "maximum", "minimum", "div", "bitwise_and", "bitwise_or", "bitwise_xor", "pow", "eq",
    "ne", "lt", "le", "gt", "ge", "neg", "abs", "relu", "exp", "log", "sqrt", "tanh", "sigmoid", "gelu",
    "gelu_grad", "copy", "cast", "fill", "arange", "eye", "uniform", "normal", "sum", "prod", "mean", "max",
    "min", "argmax", "argmin", "all", "any", "mm", "bmm", "softmax", "log_softmax", "fold_add", "fold_mul",
    "fold_maximum", "fold_minimum", "fold_bitwise_and", "fold_bitwise_or", "fold_bitwise_xor",
    // SDK 1.6.
    "sin", "cos", "where", "cumsum", "gather", "scatter_add",
    // SDK 1.7.
    "layer_norm", "rms_norm", "layer_norm_backward", "rms_norm_backward"};

// The catalogue of a plugin built for SDK 1.`minor`.
std::span<const std::string_view> catalogue_of(uint32_t minor) {
  const size_t size = minor >= kMinor17      ? kCatalogue.size()
                      : minor >= kMinor16    ? kOpsBefore17
                      : minor >= kFoldsMinor ? kOpsBefore16
                                             : kOpsBeforeFolds;
  return std::span<const std::string_view>(kCatalogue).first(size);
}

// Other frameworks' spellings (NumPy, PyTorch, ONNX) whose catalogue name no edit distance finds.
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"matmul", "mm"},     {"batch_matmul", "bmm"}, {"multiply", "mul"},     {"subtract", "sub"},
    {"divide", "div"},    {"negative", "neg"},     {"power", "pow"},        {"equal", "eq"},
    {"not_equal", "ne"},  {"greater", "gt"},       {"greater_equal", "ge"}, {"less", "lt"},
    {"less_equal", "le"}, {"full", "fill"},        {"rand", "uniform"},     {"randn", "normal"},
    {"clone", "copy"},    {"astype", "cast"},      {"amax", "max"},         {"amin", "min"}};

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The dtype's name when it is one of Tessera's five, else its DLPack fields.
std::string dtype_text(DLDataType dtype) {
  if (dtype.lanes == 1) {
    if (dtype.code == kDLFloat && dtype.bits == 32) return "float32";
    if (dtype.code == kDLFloat && dtype.bits == 64) return "float64";
    if (dtype.code == kDLInt && dtype.bits == 32) return "int32";
    if (dtype.code == kDLInt && dtype.bits == 64) return "int64";
    if (dtype.code == TESSERA_DL_BOOL_CODE && dtype.bits == 8) return "bool";
    if (dtype.code == kDLBfloat && dtype.bits == 16) return "bfloat16";
    if (dtype.code == kDLFloat && dtype.bits == 16) return "float16";
    if (dtype.code == kDLInt && dtype.bits == 8) return "int8";
    if (dtype.code == kDLUInt && dtype.bits == 8) return "uint8";
  }
  return fmt::format("DLDataType {{code {}, bits {}, lanes {}}}", dtype.code, dtype.bits, dtype.lanes);
}

// Before SDK 1.3 the SDK reserved `extension` and required NULL: a plugin built for such a minor
// that sets one expects something no host of its time did. From 1.3 on a non-NULL extension is a
// chain, checked by check_extension_chains (extension_chain.hpp) once the structs themselves pass.
std::string extension_problem(const void* extension, std::string_view where, uint32_t plugin_minor) {
  if (extension == nullptr || plugin_minor >= kFirstMinorWithExtensionChains) return {};
  return fmt::format(
      "{}: field 'extension' is not NULL ({}): extensions are not yet negotiated for plugins built "
      "for SDK {}.{} (this host is SDK {}.{}); such a plugin needs NULL there, typed extension chains "
      "start with SDK {}.{}",
      where, extension, TESSERA_SDK_VERSION_MAJOR, plugin_minor, TESSERA_SDK_VERSION_MAJOR,
      TESSERA_SDK_VERSION_MINOR, TESSERA_SDK_VERSION_MAJOR, kFirstMinorWithExtensionChains);
}

// The name a known kind's table gives itself, with the words for that table.
std::pair<const char*, const char*> table_name(const tessera_component& component) {
  switch (component.kind) {
    case TESSERA_COMPONENT_BACKEND:
      return {static_cast<const tessera_backend*>(component.table)->name, "backend"};
    case TESSERA_COMPONENT_COLLECTIVE_ALGORITHM:
      return {static_cast<const tessera_collective_algorithm*>(component.table)->name,
              "collective algorithm"};
    case TESSERA_COMPONENT_PLACEMENT:
      return {static_cast<const tessera_placement_strategy*>(component.table)->name, "placement"};
    case TESSERA_COMPONENT_TRANSPORT:
      return {static_cast<const tessera_transport*>(component.table)->name, "transport"};
    case TESSERA_COMPONENT_TUNER:
      return {static_cast<const tessera_tuner*>(component.table)->name, "tuner"};
    default:
      return {nullptr, nullptr};
  }
}

}  // namespace

std::span<const std::string_view> kernel_catalogue() { return kCatalogue; }

namespace {
// The first minor whose catalogue has `op` (a catalogue op of this host's SDK).
uint32_t minor_adding(std::string_view op) {
  uint32_t minor = 0;
  while (minor < TESSERA_SDK_VERSION_MINOR && !is_catalogue_op(op, minor)) ++minor;
  return minor;
}
}  // namespace

bool is_catalogue_op(std::string_view op, uint32_t plugin_minor) {
  const auto ops = catalogue_of(plugin_minor);
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

std::string closest_catalogue_op(std::string_view op) {
  const std::string wanted = lower(op);
  for (const auto& [alias, name] : kAliases)
    if (wanted == alias) return std::string(name);
  std::string_view best;
  size_t best_distance = std::max<size_t>(2, wanted.size() / 3);  // farther is no longer a likely typo
  for (std::string_view name : kCatalogue)
    if (const size_t d = edit_distance(wanted, name);
        d <= best_distance && (best.empty() || d < best_distance)) {
      best = name;
      best_distance = d;
    }
  return std::string(best);
}

const char* component_kind_name(int32_t kind) {
  switch (kind) {
    case TESSERA_COMPONENT_BACKEND:
      return "backend";
    case TESSERA_COMPONENT_COLLECTIVE_ALGORITHM:
      return "collective";
    case TESSERA_COMPONENT_PLACEMENT:
      return "placement";
    case TESSERA_COMPONENT_TRANSPORT:
      return "transport";
    case TESSERA_COMPONENT_TUNER:
      return "tuner";
    default:
      return "unknown";
  }
}

bool is_known_kind(int32_t kind) {
  return kind >= TESSERA_COMPONENT_BACKEND && kind <= TESSERA_COMPONENT_TUNER;
}

PluginLifecycle plugin_lifecycle(const tessera_plugin_info& info) {
  // The four 1.3 fields were added together, but each is read only if struct_size covers it.
  const auto covers = [&](size_t offset, size_t size) { return info.struct_size >= offset + size; };
  PluginLifecycle lifecycle;
  if (covers(offsetof(tessera_plugin_info, context), sizeof(info.context))) lifecycle.context = info.context;
  if (covers(offsetof(tessera_plugin_info, init), sizeof(info.init))) lifecycle.init = info.init;
  if (covers(offsetof(tessera_plugin_info, finalize), sizeof(info.finalize)))
    lifecycle.finalize = info.finalize;
  if (covers(offsetof(tessera_plugin_info, set_parameter), sizeof(info.set_parameter)))
    lifecycle.set_parameter = info.set_parameter;
  return lifecycle;
}

std::string check_plugin_info(const tessera_plugin_info* info) {
  if (info == nullptr) return "tessera_plugin_query returned OK but no plugin info";
  if (info->struct_size < kPluginInfoSizeV1)
    return fmt::format("tessera_plugin_info is {} bytes, the host needs at least {} (SDK {}.0)",
                       info->struct_size, kPluginInfoSizeV1, TESSERA_SDK_VERSION_MAJOR);
  if (info->sdk_major != TESSERA_SDK_VERSION_MAJOR)
    return fmt::format("plugin was built for SDK {}.{}, the host supports SDK major {} (up to {}.{})",
                       info->sdk_major, info->sdk_minor, TESSERA_SDK_VERSION_MAJOR, TESSERA_SDK_VERSION_MAJOR,
                       TESSERA_SDK_VERSION_MINOR);
  if (info->name == nullptr || info->name[0] == '\0') return "plugin info has no name";
  if (std::string problem = extension_problem(info->extension, "tessera_plugin_info", info->sdk_minor);
      !problem.empty())
    return problem;
  if (info->num_components > 0 && info->components == nullptr)
    return fmt::format("plugin declares {} components but the components pointer is NULL",
                       info->num_components);
  return {};
}

std::string check_component(const tessera_component* component, size_t index, uint32_t plugin_minor) {
  if (component == nullptr) return fmt::format("component #{} is NULL", index);
  if (component->struct_size < kComponentSizeV1)
    return fmt::format("component #{} struct is {} bytes, the host needs at least {}", index,
                       component->struct_size, kComponentSizeV1);
  if (component->name == nullptr || component->name[0] == '\0')
    return fmt::format("component #{} has no name", index);
  if (std::string problem = extension_problem(
          component->extension, fmt::format("component #{} ('{}')", index, component->name), plugin_minor);
      !problem.empty())
    return problem;
  if (component->table == nullptr)
    return fmt::format("component #{} ('{}') has a NULL table", index, component->name);
  if (!is_known_kind(component->kind) && plugin_minor <= TESSERA_SDK_VERSION_MINOR)
    return fmt::format(
        "component #{} ('{}') has unknown kind {} in field 'kind': the plugin claims SDK {}.{}, "
        "whose kinds this host (SDK {}.{}) knows: 1 backend, 2 collective, 3 placement, 4 transport, 5 tuner",
        index, component->name, component->kind, TESSERA_SDK_VERSION_MAJOR, plugin_minor,
        TESSERA_SDK_VERSION_MAJOR, TESSERA_SDK_VERSION_MINOR);
  if (component->kind == TESSERA_COMPONENT_BACKEND)
    if (std::string reason =
            check_backend(static_cast<const tessera_backend*>(component->table), plugin_minor);
        !reason.empty())
      return fmt::format("backend '{}': {}", component->name, reason);
  if (component->kind == TESSERA_COMPONENT_COLLECTIVE_ALGORITHM)
    if (std::string reason = check_collective_algorithm(
            static_cast<const tessera_collective_algorithm*>(component->table), plugin_minor);
        !reason.empty())
      return fmt::format("collective algorithm '{}': {}", component->name, reason);
  if (component->kind == TESSERA_COMPONENT_PLACEMENT)
    if (std::string reason =
            check_placement(static_cast<const tessera_placement_strategy*>(component->table), plugin_minor);
        !reason.empty())
      return fmt::format("placement '{}': {}", component->name, reason);
  if (component->kind == TESSERA_COMPONENT_TRANSPORT)
    if (std::string reason =
            check_transport(static_cast<const tessera_transport*>(component->table), plugin_minor);
        !reason.empty())
      return fmt::format("transport '{}': {}", component->name, reason);
  if (component->kind == TESSERA_COMPONENT_TUNER)
    if (std::string reason = check_tuner(static_cast<const tessera_tuner*>(component->table), plugin_minor);
        !reason.empty())
      return fmt::format("tuner '{}': {}", component->name, reason);
  // Lookups go by the component's name and run-time messages by the table's: they must agree.
  if (const auto [name, table] = table_name(*component);
      name != nullptr && std::strcmp(name, component->name) != 0)
    return fmt::format(
        "component #{} is named '{}' but its {} table is named '{}': the two names must be the same", index,
        component->name, table, name);
  return {};
}

std::string check_backend(const tessera_backend* backend, uint32_t plugin_minor) {
  if (backend->struct_size < kBackendSizeV1)
    return fmt::format("tessera_backend struct is {} bytes, the host needs at least {} (SDK {}.0)",
                       backend->struct_size, kBackendSizeV1, TESSERA_SDK_VERSION_MAJOR);
  if (std::string problem = extension_problem(backend->extension, "tessera_backend", plugin_minor);
      !problem.empty())
    return problem;
  if (backend->name == nullptr || backend->name[0] == '\0') return "the backend table has no name";
  if (backend->alloc == nullptr) return "required function 'alloc' is NULL";
  if (backend->free == nullptr) return "required function 'free' is NULL";
  if (backend->copy == nullptr) return "required function 'copy' is NULL";
  if (backend->num_kernels > 0 && backend->kernels == nullptr)
    return fmt::format("declares {} kernels but the kernels pointer is NULL", backend->num_kernels);
  std::map<std::tuple<std::string_view, uint8_t, uint8_t>, size_t> first_entry;  // (op, code, bits) -> index
  for (size_t i = 0; i < backend->num_kernels; ++i) {
    const tessera_kernel* kernel = backend->kernels[i];
    if (kernel == nullptr) return fmt::format("kernel #{} is NULL", i);
    if (kernel->struct_size < kKernelSizeV1)
      return fmt::format("kernel #{} struct is {} bytes, the host needs at least {}", i, kernel->struct_size,
                         kKernelSizeV1);
    if (kernel->op == nullptr) return fmt::format("kernel #{} has no op name", i);
    if (kernel->fn == nullptr) return fmt::format("kernel #{} ('{}') has a NULL function", i, kernel->op);
    const DLDataType dtype = kernel->dtype;
    if (dtype.lanes != 1) {
      const DLDataType element{dtype.code, dtype.bits, 1};
      return fmt::format(
          "kernel #{} ('{}') has a {} dtype with lanes={}: vector dtypes are not supported; expected "
          "lanes=1",
          i, kernel->op, dtype_text(element), dtype.lanes);
    }
    // An op a newer catalogue added is never called here: only a plugin for this host's SDK or an
    // older one is held to this catalogue, as of the minor it was built for.
    if (plugin_minor <= TESSERA_SDK_VERSION_MINOR && !is_catalogue_op(kernel->op, plugin_minor)) {
      const std::string closest = closest_catalogue_op(kernel->op);
      const bool newer_op = is_catalogue_op(kernel->op);
      return fmt::format(
          "kernel #{} has op '{}', which is not in the kernel catalogue (sdk/KERNELS.md) of SDK "
          "{}.{}, the version the plugin was built for; {}",
          i, kernel->op, TESSERA_SDK_VERSION_MAJOR, plugin_minor,
          newer_op ? fmt::format("it came with SDK {}.{}: rebuild the plugin against it",
                                 TESSERA_SDK_VERSION_MAJOR, minor_adding(kernel->op))
          : closest.empty()
              ? fmt::format("the catalogue's ops are {}", fmt::join(catalogue_of(plugin_minor), ", "))
              : fmt::format("did you mean '{}'?", closest));
    }
    const auto [it, inserted] =
        first_entry.emplace(std::tuple{std::string_view(kernel->op), dtype.code, dtype.bits}, i);
    if (!inserted)
      return fmt::format(
          "kernel #{} ('{}', {}) duplicates kernel #{} ('{}', {}): one (op, dtype) may have one kernel", i,
          kernel->op, dtype_text(dtype), it->second, kernel->op, dtype_text(dtype));
  }
  return {};
}

std::string check_collective_algorithm(const tessera_collective_algorithm* algorithm, uint32_t plugin_minor) {
  if (algorithm->struct_size < kAlgorithmSizeV1)
    return fmt::format(
        "tessera_collective_algorithm struct is {} bytes, the host needs at least {} (SDK {}.0)",
        algorithm->struct_size, kAlgorithmSizeV1, TESSERA_SDK_VERSION_MAJOR);
  if (std::string problem =
          extension_problem(algorithm->extension, "tessera_collective_algorithm", plugin_minor);
      !problem.empty())
    return problem;
  if (algorithm->name == nullptr || algorithm->name[0] == '\0') return "the algorithm table has no name";
  if (algorithm->check == nullptr) return "required function 'check' is NULL";
  if (algorithm->build == nullptr) return "required function 'build' is NULL";
  if (algorithm->collectives >> TESSERA_COLL_COUNT != 0)
    return fmt::format("offers unknown collectives (mask {:#x}; this host knows {})", algorithm->collectives,
                       TESSERA_COLL_COUNT);
  return {};
}

std::string check_placement(const tessera_placement_strategy* placement, uint32_t plugin_minor) {
  if (placement->struct_size < kPlacementSizeV1)
    return fmt::format("tessera_placement_strategy struct is {} bytes, the host needs at least {} (SDK {}.0)",
                       placement->struct_size, kPlacementSizeV1, TESSERA_SDK_VERSION_MAJOR);
  if (std::string problem =
          extension_problem(placement->extension, "tessera_placement_strategy", plugin_minor);
      !problem.empty())
    return problem;
  if (placement->name == nullptr || placement->name[0] == '\0') return "the placement table has no name";
  if (placement->prefix == nullptr || placement->prefix[0] == '\0') return "the placement has no text prefix";
  for (const char* c = placement->prefix; *c != '\0'; ++c)
    if (!std::isalpha(static_cast<unsigned char>(*c)))
      return fmt::format("prefix '{}' must be letters only", placement->prefix);
  if (placement->kind < TESSERA_PLACEMENT_SHARD || placement->kind > TESSERA_PLACEMENT_PARTIAL)
    return fmt::format("unknown kind {}", placement->kind);
  // SDK 1.3: a strategy taking arguments has check_arguments and layout_with_arguments (both or
  // neither), and then needs no plain layout.
  const bool has_argument_fields =
      placement->struct_size >= offsetof(tessera_placement_strategy, layout_with_arguments) + sizeof(void*);
  const bool checks_arguments = has_argument_fields && placement->check_arguments != nullptr;
  const bool lays_out_arguments = has_argument_fields && placement->layout_with_arguments != nullptr;
  if (checks_arguments != lays_out_arguments)
    return fmt::format(
        "'check_arguments' is {} but 'layout_with_arguments' is {}; a strategy taking arguments "
        "sets both, one taking none neither",
        checks_arguments ? "set" : "NULL", lays_out_arguments ? "set" : "NULL");
  if (lays_out_arguments && placement->kind != TESSERA_PLACEMENT_SHARD)
    return "only a shard-like placement (TESSERA_PLACEMENT_SHARD) can take arguments";
  if (placement->kind == TESSERA_PLACEMENT_SHARD && placement->layout == nullptr && !lays_out_arguments)
    return "a shard-like placement needs a layout function (layout, or layout_with_arguments with "
           "check_arguments)";
  return {};
}

std::string check_transport(const tessera_transport* transport, uint32_t plugin_minor) {
  if (transport->struct_size < kTransportSizeV1_1)
    return fmt::format(
        "tessera_transport struct is {} bytes, the host needs at least {} (SDK {}.1, up to "
        "field 'free_request')",
        transport->struct_size, kTransportSizeV1_1, TESSERA_SDK_VERSION_MAJOR);
  if (std::string problem = extension_problem(transport->extension, "tessera_transport", plugin_minor);
      !problem.empty())
    return problem;
  if (transport->name == nullptr || transport->name[0] == '\0') return "the transport table has no name";
  const std::pair<const char*, bool> required[] = {{"init", transport->init != nullptr},
                                                   {"finalize", transport->finalize != nullptr},
                                                   {"isend", transport->isend != nullptr},
                                                   {"irecv", transport->irecv != nullptr},
                                                   {"test", transport->test != nullptr},
                                                   {"wait", transport->wait != nullptr},
                                                   {"free_request", transport->free_request != nullptr}};
  for (const auto& [field, present] : required)
    if (!present) return fmt::format("required function '{}' is NULL", field);
  return {};
}

std::string check_tuner(const tessera_tuner* tuner, uint32_t plugin_minor) {
  // The kind's number meant nothing before 1.5: a plugin of an older minor declaring it is confused.
  if (plugin_minor < kFirstMinorWithTuners)
    return fmt::format(
        "the tuner component (kind {}) came with SDK {}.{}, but the plugin claims SDK {}.{}: rebuild "
        "it against SDK {}.{} or later",
        static_cast<int>(TESSERA_COMPONENT_TUNER), TESSERA_SDK_VERSION_MAJOR, kFirstMinorWithTuners,
        TESSERA_SDK_VERSION_MAJOR, plugin_minor, TESSERA_SDK_VERSION_MAJOR, kFirstMinorWithTuners);
  if (tuner->struct_size < kTunerSizeV1_5)
    return fmt::format(
        "tessera_tuner struct is {} bytes, the host needs at least {} (SDK {}.{}, up to field 'tune')",
        tuner->struct_size, kTunerSizeV1_5, TESSERA_SDK_VERSION_MAJOR, kFirstMinorWithTuners);
  if (std::string problem = extension_problem(tuner->extension, "tessera_tuner", plugin_minor);
      !problem.empty())
    return problem;
  if (tuner->name == nullptr || tuner->name[0] == '\0') return "the tuner table has no name";
  if (tuner->tune == nullptr) return "required function 'tune' is NULL";
  return {};
}

std::string error_text(tessera_error& error) {
  const size_t length = strnlen(error.message, sizeof(error.message));
  error.message[sizeof(error.message) - 1] = '\0';
  if (length == 0) return "no message";
  // Cut by the plugin's snprintf (511 bytes and a NUL) or not terminated at all (512 bytes).
  if (length >= sizeof(error.message) - 1)
    return fmt::format("{} [the plugin's message was truncated to the {} bytes of tessera_error.message]",
                       error.message, sizeof(error.message) - 1);
  return error.message;
}

std::string status_text(tessera_status status) {
  const char* name = nullptr;
  switch (status) {
    case TESSERA_OK:
      name = "OK";
      break;
    case TESSERA_INVALID_ARGUMENT:
      name = "INVALID_ARGUMENT";
      break;
    case TESSERA_UNIMPLEMENTED:
      name = "UNIMPLEMENTED";
      break;
    case TESSERA_OUT_OF_MEMORY:
      name = "OUT_OF_MEMORY";
      break;
    case TESSERA_VERSION_MISMATCH:
      name = "VERSION_MISMATCH";
      break;
    case TESSERA_INTERNAL:
      name = "INTERNAL";
      break;
    case TESSERA_TIMEOUT:
      name = "TIMEOUT";
      break;
    case TESSERA_NOT_FOUND:
      name = "NOT_FOUND";
      break;
    case TESSERA_UNAVAILABLE:
      name = "UNAVAILABLE";
      break;
    case TESSERA_ABORTED:
      name = "ABORTED";
      break;
    default:
      return fmt::format("{} (a code no SDK {}.x up to {}.{} defines)", status, TESSERA_SDK_VERSION_MAJOR,
                         TESSERA_SDK_VERSION_MAJOR, TESSERA_SDK_VERSION_MINOR);
  }
  return fmt::format("{} ({})", status, name);
}

}  // namespace tessera::plugin
