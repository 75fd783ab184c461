/* The size of every SDK struct as each minor version defined it (SDK 1.7), like PJRT's
 * *_STRUCT_SIZE constants: a plugin sets struct_size to the size of the version it fills, and reads
 * a field of a host-filled struct only when the host's struct_size reaches the end of that field
 * (TESSERA_STRUCT_HAS). Only the minors that changed a struct have a constant for it; a struct is
 * the same in every minor between two constants.
 *
 * The host's least accepted sizes are smaller for some tables: it needs a struct up to its last
 * required field (sdk/README.md lists them), and reads optional fields only where struct_size
 * reaches them. */
#ifndef TESSERA_SDK_STRUCT_SIZES_H
#define TESSERA_SDK_STRUCT_SIZES_H

#include <stddef.h>

#include "tessera/sdk/backend.h"
#include "tessera/sdk/collective.h"
#include "tessera/sdk/placement.h"
#include "tessera/sdk/plugin.h"
#include "tessera/sdk/status.h"
#include "tessera/sdk/transport.h"
#include "tessera/sdk/tuner.h"

/* The size of `type` up to and including `last_field` (sizeof a pointer when the field is one). */
/* NOLINTNEXTLINE(bugprone-sizeof-expression) */
#define TESSERA_STRUCT_SIZE(type, last_field) (offsetof(type, last_field) + sizeof(((type*)0)->last_field))
/* Whether a struct whose struct_size is `size` holds `field` of `type` entirely. */
#define TESSERA_STRUCT_HAS(type, field, size) ((size) >= TESSERA_STRUCT_SIZE(type, field))

/* status.h */
#define TESSERA_ERROR_STRUCT_SIZE_1_0 TESSERA_STRUCT_SIZE(tessera_error, message)

/* plugin.h */
#define TESSERA_HOST_INFO_STRUCT_SIZE_1_0 TESSERA_STRUCT_SIZE(tessera_host_info, log)
#define TESSERA_COMPONENT_STRUCT_SIZE_1_0 TESSERA_STRUCT_SIZE(tessera_component, table)
#define TESSERA_COMPONENT_STRUCT_SIZE_1_3 TESSERA_STRUCT_SIZE(tessera_component, flags)
#define TESSERA_PLUGIN_INFO_STRUCT_SIZE_1_0 TESSERA_STRUCT_SIZE(tessera_plugin_info, components)
#define TESSERA_PLUGIN_INFO_STRUCT_SIZE_1_3 TESSERA_STRUCT_SIZE(tessera_plugin_info, set_parameter)
#define TESSERA_PLUGIN_INFO_STRUCT_SIZE_1_5 TESSERA_STRUCT_SIZE(tessera_plugin_info, parameters)
#define TESSERA_PARAMETER_STRUCT_SIZE_1_5 TESSERA_STRUCT_SIZE(tessera_parameter, choices)
#define TESSERA_EXTENSION_STRUCT_SIZE_1_3 TESSERA_STRUCT_SIZE(tessera_extension, next)

/* backend.h */
#define TESSERA_KERNEL_STRUCT_SIZE_1_0 TESSERA_STRUCT_SIZE(tessera_kernel, fn)
#define TESSERA_BACKEND_STRUCT_SIZE_1_0 TESSERA_STRUCT_SIZE(tessera_backend, set_num_threads)
#define TESSERA_BACKEND_STRUCT_SIZE_1_2 TESSERA_STRUCT_SIZE(tessera_backend, flags)

/* collective.h */
#define TESSERA_COLLECTIVE_REQUEST_STRUCT_SIZE_1_0 TESSERA_STRUCT_SIZE(tessera_collective_request, ring_order)
#define TESSERA_COLLECTIVE_REQUEST_STRUCT_SIZE_1_3 \
  TESSERA_STRUCT_SIZE(tessera_collective_request, transfer_time)
#define TESSERA_SCHEDULE_BUILDER_STRUCT_SIZE_1_0 TESSERA_STRUCT_SIZE(tessera_schedule_builder, reduce)
#define TESSERA_COLLECTIVE_ALGORITHM_STRUCT_SIZE_1_0 TESSERA_STRUCT_SIZE(tessera_collective_algorithm, build)
#define TESSERA_COLLECTIVE_ALGORITHM_STRUCT_SIZE_1_3 \
  TESSERA_STRUCT_SIZE(tessera_collective_algorithm, estimate)

/* placement.h */
#define TESSERA_PLACEMENT_STRATEGY_STRUCT_SIZE_1_0 TESSERA_STRUCT_SIZE(tessera_placement_strategy, layout)
#define TESSERA_PLACEMENT_STRATEGY_STRUCT_SIZE_1_3 \
  TESSERA_STRUCT_SIZE(tessera_placement_strategy, layout_with_arguments)

/* transport.h */
#define TESSERA_TRANSPORT_CONFIG_STRUCT_SIZE_1_1 TESSERA_STRUCT_SIZE(tessera_transport_config, timeout_ms)
#define TESSERA_TRANSPORT_INFO_STRUCT_SIZE_1_1 TESSERA_STRUCT_SIZE(tessera_transport_info, max_tag)
#define TESSERA_TRANSPORT_STRUCT_SIZE_1_1 TESSERA_STRUCT_SIZE(tessera_transport, allgather)
#define TESSERA_TRANSPORT_STRUCT_SIZE_1_5 TESSERA_STRUCT_SIZE(tessera_transport, abort)

/* tuner.h */
#define TESSERA_TUNER_REQUEST_STRUCT_SIZE_1_5 TESSERA_STRUCT_SIZE(tessera_tuner_request, collective_request)
#define TESSERA_TUNER_COST_STRUCT_SIZE_1_5 TESSERA_STRUCT_SIZE(tessera_tuner_cost, vetoed)
#define TESSERA_TUNER_STRUCT_SIZE_1_5 TESSERA_STRUCT_SIZE(tessera_tuner, tune)

#endif
