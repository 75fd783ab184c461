// Golden layout of every SDK v1 struct (x86-64 / LP64). A change here is an ABI break: it needs a
// new TESSERA_SDK_VERSION_MAJOR, or — for appended fields only — a new MINOR and new lines below.
// The SDK 1.0 goldens are the first block; 1.1 changed none of them and added the transport structs
// and two enum values (the 1.1 block); 1.2 appended one field to tessera_backend (the last block,
// which also pins the backend table's 1.0/1.1 size where that field begins); 1.3 appended fields to
// five structs and added tessera_extension (the 1.3 block: each appended field begins exactly at the
// struct's 1.2 size, pinned there). Numbers are worked out by hand from the field lists:
// 1.5 added the tuner structs and TESSERA_COMPONENT_TUNER (the last block).
// pointers, size_t and int64_t are 8 bytes aligned to 8, int32_t 4 aligned to 4.
#include <doctest/doctest.h>

#include <cstddef>
#include <string>

#include "tessera/sdk/backend.h"
#include "tessera/sdk/collective.h"
#include "tessera/sdk/placement.h"
#include "tessera/sdk/plugin.h"
#include "tessera/sdk/status.h"
#include "tessera/sdk/struct_sizes.h"
#include "tessera/sdk/transport.h"
#include "tessera/sdk/tuner.h"
#include "tessera/sdk/version.h"

// 1.4 added kernels to the catalogue (the folds) and changed no struct; 1.5 appended fields (the
// last block); 1.6 added kernels (sin, cos, where, cumsum, gather, scatter_add) and
// element types, and changed no struct; 1.7 added kernels (layer_norm, rms_norm and their backward
// kernels) and changed no struct.
TEST_CASE("SDK version is 1.7") {
  CHECK(TESSERA_SDK_VERSION_MAJOR == 1);
  CHECK(TESSERA_SDK_VERSION_MINOR == 7);
}

TEST_CASE("SDK 1.0 enum values are unchanged") {
  CHECK(TESSERA_OK == 0);
  CHECK(TESSERA_INVALID_ARGUMENT == 1);
  CHECK(TESSERA_UNIMPLEMENTED == 2);
  CHECK(TESSERA_OUT_OF_MEMORY == 3);
  CHECK(TESSERA_VERSION_MISMATCH == 4);
  CHECK(TESSERA_INTERNAL == 5);
  CHECK(TESSERA_COMPONENT_BACKEND == 1);
  CHECK(TESSERA_COMPONENT_COLLECTIVE_ALGORITHM == 2);
  CHECK(TESSERA_COMPONENT_PLACEMENT == 3);
}

TEST_CASE("tessera_error layout") {
  CHECK(sizeof(tessera_error) == 528);
  CHECK(offsetof(tessera_error, struct_size) == 0);
  CHECK(offsetof(tessera_error, code) == 8);
  CHECK(offsetof(tessera_error, message) == 12);
  CHECK(TESSERA_ERROR_MESSAGE_CAPACITY == 512);
}

TEST_CASE("tessera_host_info layout") {
  CHECK(sizeof(tessera_host_info) == 40);
  CHECK(offsetof(tessera_host_info, extension) == 8);
  CHECK(offsetof(tessera_host_info, sdk_major) == 16);
  CHECK(offsetof(tessera_host_info, sdk_minor) == 20);
  CHECK(offsetof(tessera_host_info, host_name) == 24);
  CHECK(offsetof(tessera_host_info, log) == 32);
}

TEST_CASE("tessera_component layout") {
  CHECK(offsetof(tessera_component, extension) == 8);
  CHECK(offsetof(tessera_component, kind) == 16);
  CHECK(offsetof(tessera_component, name) == 24);
  CHECK(offsetof(tessera_component, table) == 32);
}

TEST_CASE("tessera_plugin_info layout") {
  CHECK(offsetof(tessera_plugin_info, extension) == 8);
  CHECK(offsetof(tessera_plugin_info, sdk_major) == 16);
  CHECK(offsetof(tessera_plugin_info, sdk_minor) == 20);
  CHECK(offsetof(tessera_plugin_info, name) == 24);
  CHECK(offsetof(tessera_plugin_info, version) == 32);
  CHECK(offsetof(tessera_plugin_info, description) == 40);
  CHECK(offsetof(tessera_plugin_info, num_components) == 48);
  CHECK(offsetof(tessera_plugin_info, components) == 56);
}

TEST_CASE("tessera_attr layout") {
  CHECK(sizeof(tessera_attr) == 56);
  CHECK(offsetof(tessera_attr, name) == 8);
  CHECK(offsetof(tessera_attr, kind) == 16);
  CHECK(offsetof(tessera_attr, int_value) == 24);
  CHECK(offsetof(tessera_attr, float_value) == 32);
  CHECK(offsetof(tessera_attr, ints) == 40);
  CHECK(offsetof(tessera_attr, num_ints) == 48);
}

TEST_CASE("tessera_kernel_call layout") {
  CHECK(sizeof(tessera_kernel_call) == 64);
  CHECK(offsetof(tessera_kernel_call, extension) == 8);
  CHECK(offsetof(tessera_kernel_call, inputs) == 16);
  CHECK(offsetof(tessera_kernel_call, num_inputs) == 24);
  CHECK(offsetof(tessera_kernel_call, outputs) == 32);
  CHECK(offsetof(tessera_kernel_call, num_outputs) == 40);
  CHECK(offsetof(tessera_kernel_call, attrs) == 48);
  CHECK(offsetof(tessera_kernel_call, num_attrs) == 56);
}

TEST_CASE("tessera_kernel layout") {
  CHECK(sizeof(tessera_kernel) == 32);
  CHECK(offsetof(tessera_kernel, op) == 8);
  CHECK(offsetof(tessera_kernel, dtype) == 16);
  CHECK(offsetof(tessera_kernel, fn) == 24);
}

TEST_CASE("tessera_backend layout") {
  // 88 bytes in SDK 1.0 and 1.1 (eleven 8-byte fields; int32_t device_type padded to 8): the 1.2
  // field begins exactly there, so a 1.0/1.1 table is a prefix of a 1.2 one.
  CHECK(offsetof(tessera_backend, flags) == 88);
  CHECK(offsetof(tessera_backend, extension) == 8);
  CHECK(offsetof(tessera_backend, name) == 16);
  CHECK(offsetof(tessera_backend, device_type) == 24);
  CHECK(offsetof(tessera_backend, context) == 32);
  CHECK(offsetof(tessera_backend, alloc) == 40);
  CHECK(offsetof(tessera_backend, free) == 48);
  CHECK(offsetof(tessera_backend, copy) == 56);
  CHECK(offsetof(tessera_backend, num_kernels) == 64);
  CHECK(offsetof(tessera_backend, kernels) == 72);
  CHECK(offsetof(tessera_backend, set_num_threads) == 80);
}

TEST_CASE("DLPack structs the SDK embeds") {
  CHECK(sizeof(DLDataType) == 4);
  CHECK(sizeof(DLDevice) == 8);
  CHECK(sizeof(DLTensor) == 48);
}

TEST_CASE("collective algorithm structs layout") {
  CHECK(sizeof(tessera_chunk) == 24);
  CHECK(offsetof(tessera_chunk, offset) == 8);
  CHECK(offsetof(tessera_chunk, count) == 16);
  CHECK(offsetof(tessera_collective_request, extension) == 8);
  CHECK(offsetof(tessera_collective_request, collective) == 16);
  CHECK(offsetof(tessera_collective_request, group_size) == 20);
  CHECK(offsetof(tessera_collective_request, count) == 24);
  CHECK(offsetof(tessera_collective_request, dtype) == 32);
  CHECK(offsetof(tessera_collective_request, reduce_op) == 36);
  CHECK(offsetof(tessera_collective_request, root) == 40);
  CHECK(offsetof(tessera_collective_request, ring_order) == 48);
  CHECK(sizeof(tessera_schedule_builder) == 64);
  CHECK(offsetof(tessera_schedule_builder, context) == 8);
  CHECK(offsetof(tessera_schedule_builder, add_buffer) == 16);
  CHECK(offsetof(tessera_schedule_builder, send) == 24);
  CHECK(offsetof(tessera_schedule_builder, recv) == 32);
  CHECK(offsetof(tessera_schedule_builder, recv_reduce) == 40);
  CHECK(offsetof(tessera_schedule_builder, copy) == 48);
  CHECK(offsetof(tessera_schedule_builder, reduce) == 56);
  CHECK(offsetof(tessera_collective_algorithm, name) == 16);
  CHECK(offsetof(tessera_collective_algorithm, context) == 24);
  CHECK(offsetof(tessera_collective_algorithm, collectives) == 32);
  CHECK(offsetof(tessera_collective_algorithm, check) == 40);
  CHECK(offsetof(tessera_collective_algorithm, build) == 48);
}

TEST_CASE("placement strategy structs layout") {
  CHECK(sizeof(tessera_segment) == 16);
  CHECK(offsetof(tessera_segment, length) == 8);
  CHECK(offsetof(tessera_placement_strategy, name) == 16);
  CHECK(offsetof(tessera_placement_strategy, prefix) == 24);
  CHECK(offsetof(tessera_placement_strategy, kind) == 32);
  CHECK(offsetof(tessera_placement_strategy, context) == 40);
  CHECK(offsetof(tessera_placement_strategy, layout) == 48);
}

// ---- SDK 1.1 additions ----

TEST_CASE("SDK 1.1 enum values") {
  CHECK(TESSERA_TIMEOUT == 6);
  CHECK(TESSERA_COMPONENT_TRANSPORT == 4);
}

TEST_CASE("tessera_transport_config layout (1.1)") {
  // struct_size, extension, timeout_ms: three 8-byte fields.
  CHECK(sizeof(tessera_transport_config) == 24);
  CHECK(offsetof(tessera_transport_config, struct_size) == 0);
  CHECK(offsetof(tessera_transport_config, extension) == 8);
  CHECK(offsetof(tessera_transport_config, timeout_ms) == 16);
}

TEST_CASE("tessera_transport_info layout (1.1, 1.5)") {
  // Two 8-byte fields, two int32_t packed into one 8-byte slot, then int64_t max_tag; 1.5 appended
  // two doubles, an int64_t and an int32_t (padded to 8).
  CHECK(sizeof(tessera_transport_info) == 64);
  CHECK(offsetof(tessera_transport_info, struct_size) == 0);
  CHECK(offsetof(tessera_transport_info, extension) == 8);
  CHECK(offsetof(tessera_transport_info, process_index) == 16);
  CHECK(offsetof(tessera_transport_info, process_count) == 20);
  CHECK(offsetof(tessera_transport_info, max_tag) == 24);
  CHECK(offsetof(tessera_transport_info, latency) == 32);  // appended in 1.5
  CHECK(offsetof(tessera_transport_info, bandwidth) == 40);
  CHECK(offsetof(tessera_transport_info, max_message_bytes) == 48);
  CHECK(offsetof(tessera_transport_info, device_memory) == 56);
}

TEST_CASE("tessera_transport layout (1.1)") {
  // Twelve 8-byte fields in declaration order: four data fields, eight function pointers.
  CHECK(sizeof(tessera_transport) == 104);
  CHECK(offsetof(tessera_transport, struct_size) == 0);
  CHECK(offsetof(tessera_transport, extension) == 8);
  CHECK(offsetof(tessera_transport, name) == 16);
  CHECK(offsetof(tessera_transport, context) == 24);
  CHECK(offsetof(tessera_transport, init) == 32);
  CHECK(offsetof(tessera_transport, finalize) == 40);
  CHECK(offsetof(tessera_transport, isend) == 48);
  CHECK(offsetof(tessera_transport, irecv) == 56);
  CHECK(offsetof(tessera_transport, test) == 64);
  CHECK(offsetof(tessera_transport, wait) == 72);
  CHECK(offsetof(tessera_transport, free_request) == 80);
  CHECK(offsetof(tessera_transport, allgather) == 88);
  CHECK(offsetof(tessera_transport, abort) == 96);  // appended in 1.5
  CHECK(sizeof(tessera_transport_request) == 8);    // an opaque pointer
}

// ---- SDK 1.2 additions ----

TEST_CASE("tessera_backend layout (1.2): flags appended") {
  // One uint64_t after set_num_threads: 88 + 8.
  CHECK(sizeof(tessera_backend) == 96);
  CHECK(offsetof(tessera_backend, flags) == 88);
  CHECK(sizeof(tessera_backend::flags) == 8);
  CHECK(TESSERA_BACKEND_SHAPES_ONLY == 1);
}

// ---- SDK 1.3 additions ----
// The sizes above that 1.3 changed moved here: each struct's 1.2 size is where its first 1.3 field
// begins, so a 1.2 struct is a prefix of its 1.3 form.

TEST_CASE("tessera_extension layout (1.3)") {
  // size_t struct_size, int32_t type padded to 8, a pointer: 8 + 8 + 8.
  CHECK(sizeof(tessera_extension) == 24);
  CHECK(offsetof(tessera_extension, struct_size) == 0);
  CHECK(offsetof(tessera_extension, type) == 8);
  CHECK(offsetof(tessera_extension, next) == 16);
  CHECK(TESSERA_EXTENSION_CHAIN_MAX == 64);
  CHECK(TESSERA_EXTENSION_USER == 0x10000);
}

TEST_CASE("tessera_component layout (1.3): flags appended") {
  // 1.2: struct_size, extension, kind (int32_t padded to 8), name, table = 40 bytes.
  CHECK(offsetof(tessera_component, flags) == 40);
  CHECK(sizeof(tessera_component::flags) == 8);
  CHECK(sizeof(tessera_component) == 48);
  CHECK(TESSERA_COMPONENT_OVERRIDES == 1);
}

TEST_CASE("tessera_plugin_info layout (1.3): lifecycle and parameters appended") {
  // 1.2: eight 8-byte slots (sdk_major and sdk_minor share one) = 64 bytes; then four pointers.
  CHECK(offsetof(tessera_plugin_info, context) == 64);
  CHECK(offsetof(tessera_plugin_info, init) == 72);
  CHECK(offsetof(tessera_plugin_info, finalize) == 80);
  CHECK(offsetof(tessera_plugin_info, set_parameter) == 88);
}

TEST_CASE("tessera_collective_request layout (1.3): topology appended") {
  // 1.2: struct_size, extension, collective+group_size, count, dtype+reduce_op, root (padded to 8),
  // ring_order = seven 8-byte slots, 56 bytes; then four pointers.
  CHECK(offsetof(tessera_collective_request, group_ranks) == 56);
  CHECK(offsetof(tessera_collective_request, topology) == 64);
  CHECK(offsetof(tessera_collective_request, locality) == 72);
  CHECK(offsetof(tessera_collective_request, transfer_time) == 80);
  CHECK(sizeof(tessera_collective_request) == 88);
  CHECK(TESSERA_LOCALITY_NUMA == 0);
  CHECK(TESSERA_LOCALITY_NODE == 1);
  CHECK(TESSERA_LOCALITY_SWITCH == 2);
}

TEST_CASE("tessera_collective_algorithm layout (1.3): estimate appended") {
  // 1.2: struct_size, extension, name, context, collectives, check, build = 56 bytes.
  CHECK(offsetof(tessera_collective_algorithm, estimate) == 56);
  CHECK(sizeof(tessera_collective_algorithm) == 64);
}

TEST_CASE("tessera_placement_strategy layout (1.3): arguments appended") {
  // 1.2: struct_size, extension, name, prefix, kind (int32_t padded to 8), context, layout = 56.
  CHECK(offsetof(tessera_placement_strategy, check_arguments) == 56);
  CHECK(offsetof(tessera_placement_strategy, layout_with_arguments) == 64);
  CHECK(sizeof(tessera_placement_strategy) == 72);
}

// ---- SDK 1.5 additions ----

TEST_CASE("SDK 1.5 status codes and limits") {
  CHECK(TESSERA_NOT_FOUND == 7);
  CHECK(TESSERA_UNAVAILABLE == 8);
  CHECK(TESSERA_ABORTED == 9);
  CHECK(TESSERA_EXTENSION_STRUCT_MAX == 65536);
  CHECK(std::string(TESSERA_PLUGIN_QUERY_SYMBOL_V1) == "tessera_plugin_query_v1");
  CHECK(std::string(TESSERA_PLUGIN_QUERY_SYMBOL_PREFIX) == "tessera_plugin_query_v");
}

TEST_CASE("struct size constants of every minor (struct_sizes.h), worked out from the field lists") {
  // Each ends at its last field: no tail padding (tessera_error's 524 is its sizeof of 528 less the
  // padding after a 12 + 512 byte body).
  CHECK(TESSERA_ERROR_STRUCT_SIZE_1_0 == 524);
  CHECK(TESSERA_HOST_INFO_STRUCT_SIZE_1_0 == 40);
  CHECK(TESSERA_COMPONENT_STRUCT_SIZE_1_0 == 40);
  CHECK(TESSERA_COMPONENT_STRUCT_SIZE_1_3 == 48);
  CHECK(TESSERA_PLUGIN_INFO_STRUCT_SIZE_1_0 == 64);
  CHECK(TESSERA_PLUGIN_INFO_STRUCT_SIZE_1_3 == 96);
  CHECK(TESSERA_EXTENSION_STRUCT_SIZE_1_3 == 24);
  // struct_size, op, dtype (4 bytes, padded to 8), fn.
  CHECK(TESSERA_KERNEL_STRUCT_SIZE_1_0 == 32);
  CHECK(TESSERA_BACKEND_STRUCT_SIZE_1_0 == 88);
  CHECK(TESSERA_BACKEND_STRUCT_SIZE_1_2 == 96);
  CHECK(TESSERA_COLLECTIVE_REQUEST_STRUCT_SIZE_1_0 == 56);
  CHECK(TESSERA_COLLECTIVE_REQUEST_STRUCT_SIZE_1_3 == 88);
  // struct_size, context and six functions.
  CHECK(TESSERA_SCHEDULE_BUILDER_STRUCT_SIZE_1_0 == 64);
  CHECK(TESSERA_COLLECTIVE_ALGORITHM_STRUCT_SIZE_1_0 == 56);
  CHECK(TESSERA_COLLECTIVE_ALGORITHM_STRUCT_SIZE_1_3 == 64);
  CHECK(TESSERA_PLACEMENT_STRATEGY_STRUCT_SIZE_1_0 == 56);
  CHECK(TESSERA_PLACEMENT_STRATEGY_STRUCT_SIZE_1_3 == 72);
  CHECK(TESSERA_TRANSPORT_CONFIG_STRUCT_SIZE_1_1 == 24);
  CHECK(TESSERA_TRANSPORT_INFO_STRUCT_SIZE_1_1 == 32);
  CHECK(TESSERA_TRANSPORT_STRUCT_SIZE_1_1 == 96);
  CHECK(TESSERA_TRANSPORT_STRUCT_SIZE_1_5 == 104);
  CHECK(TESSERA_STRUCT_HAS(tessera_backend, flags, TESSERA_BACKEND_STRUCT_SIZE_1_2));
  CHECK_FALSE(TESSERA_STRUCT_HAS(tessera_backend, flags, TESSERA_BACKEND_STRUCT_SIZE_1_0));
}

TEST_CASE("tessera_parameter layout (1.5)") {
  // struct_size, extension, name, type (int32_t padded to 8), default_value, help, two int64_t,
  // two doubles, num_choices, choices: twelve 8-byte slots.
  CHECK(offsetof(tessera_parameter, extension) == 8);
  CHECK(offsetof(tessera_parameter, name) == 16);
  CHECK(offsetof(tessera_parameter, type) == 24);
  CHECK(offsetof(tessera_parameter, default_value) == 32);
  CHECK(offsetof(tessera_parameter, help) == 40);
  CHECK(offsetof(tessera_parameter, integer_min) == 48);
  CHECK(offsetof(tessera_parameter, integer_max) == 56);
  CHECK(offsetof(tessera_parameter, real_min) == 64);
  CHECK(offsetof(tessera_parameter, real_max) == 72);
  CHECK(offsetof(tessera_parameter, num_choices) == 80);
  CHECK(offsetof(tessera_parameter, choices) == 88);
  CHECK(sizeof(tessera_parameter) == 96);
  CHECK(TESSERA_PARAMETER_STRUCT_SIZE_1_5 == 96);
  CHECK(TESSERA_PARAMETER_INTEGER == 1);
  CHECK(TESSERA_PARAMETER_REAL == 2);
  CHECK(TESSERA_PARAMETER_BOOLEAN == 3);
  CHECK(TESSERA_PARAMETER_TEXT == 4);
  CHECK(TESSERA_PARAMETER_CHOICE == 5);
  CHECK(TESSERA_PARAMETERS_MAX == 1024);
}

TEST_CASE("tessera_plugin_info layout (1.5): the parameter schema appended") {
  // The 1.3 size, 96, is where the schema begins.
  CHECK(offsetof(tessera_plugin_info, num_parameters) == 96);
  CHECK(offsetof(tessera_plugin_info, parameters) == 104);
  CHECK(sizeof(tessera_plugin_info) == 112);
  CHECK(TESSERA_PLUGIN_INFO_STRUCT_SIZE_1_5 == 112);
}

TEST_CASE("SDK 1.5 tuner structs layout") {
  CHECK(TESSERA_COMPONENT_TUNER == 5);
  // struct_size, extension; collective, group_size (int32_t each); bytes; num_nodes,
  // max_ranks_per_node (int32_t each); two doubles; a pointer.
  CHECK(offsetof(tessera_tuner_request, collective) == 16);
  CHECK(offsetof(tessera_tuner_request, group_size) == 20);
  CHECK(offsetof(tessera_tuner_request, bytes) == 24);
  CHECK(offsetof(tessera_tuner_request, num_nodes) == 32);
  CHECK(offsetof(tessera_tuner_request, max_ranks_per_node) == 36);
  CHECK(offsetof(tessera_tuner_request, slowest_latency) == 40);
  CHECK(offsetof(tessera_tuner_request, slowest_bandwidth) == 48);
  CHECK(offsetof(tessera_tuner_request, collective_request) == 56);
  CHECK(sizeof(tessera_tuner_request) == 64);
  // struct_size, algorithm, seconds, then modelled and vetoed (int32_t each).
  CHECK(offsetof(tessera_tuner_cost, algorithm) == 8);
  CHECK(offsetof(tessera_tuner_cost, seconds) == 16);
  CHECK(offsetof(tessera_tuner_cost, modelled) == 24);
  CHECK(offsetof(tessera_tuner_cost, vetoed) == 28);
  CHECK(sizeof(tessera_tuner_cost) == 32);
  CHECK(offsetof(tessera_tuner, name) == 16);
  CHECK(offsetof(tessera_tuner, context) == 24);
  CHECK(offsetof(tessera_tuner, tune) == 32);
  CHECK(sizeof(tessera_tuner) == 40);
  CHECK(TESSERA_TUNER_REQUEST_STRUCT_SIZE_1_5 == 64);
  CHECK(TESSERA_TUNER_COST_STRUCT_SIZE_1_5 == 32);
  CHECK(TESSERA_TUNER_STRUCT_SIZE_1_5 == 40);
}
