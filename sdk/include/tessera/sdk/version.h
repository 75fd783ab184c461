/* Tessera SDK version.
 *
 * MAJOR changes only for a breaking change to any SDK struct or signature (a field removed,
 * reordered or retyped). MINOR changes when fields or functions are appended. A host accepts a
 * plugin whose MAJOR equals its own; fields a plugin built against an older MINOR lacks read as
 * absent (see struct_size in every struct).
 *
 * 1.0: backend, collective algorithm and placement components.
 * 1.1: the transport component (transport.h, TESSERA_COMPONENT_TRANSPORT) and TESSERA_TIMEOUT;
 *      no 1.0 struct changed, so a 1.0 plugin loads unchanged in a 1.1 host.
 * 1.2: tessera_backend.flags appended (TESSERA_BACKEND_SHAPES_ONLY: a backend of shapes without
 *      values); a 1.0 or 1.1 backend table ends before it and reads as an ordinary backend.
 * 1.3: for plugin authors: typed extension chains (tessera_extension), component flags
 *      (TESSERA_COMPONENT_OVERRIDES), plugin lifecycle (init/finalize) and parameters
 *      (set_parameter), topology in the collective request, algorithm cost estimates (tuning),
 *      placement arguments ("C(0, 4)"). Every addition is an appended field; a table from an older
 *      minor ends before it, and the field reads as absent (NULL, 0).
 * 1.4: the fold kernels (KERNELS.md, "Folds": fold_add, fold_mul, ...), optional for a backend; no
 *      struct changed. A plugin built for 1.3 or older may not register them (they are not in its
 *      catalogue).
 * 1.5: for plugin authors: tessera_transport.abort appended (optional): how the host leaves a world
 *      whose link failed instead of finalizing it (a 1.1-1.4 transport table ends before it; the
 *      host then skips finalize after a failure); link properties appended to
 *      tessera_transport_info that init reports (latency, bandwidth, max_message_bytes,
 *      device_memory; 0 = unknown or no limit): latency and bandwidth cost the links between
 *      processes in the world's topology, a longer message than max_message_bytes is refused, and
 *      every process must report the same (a 1.1-1.4 transport never writes them: its world is
 *      costed on the [topology] preset alone, as before); transport.h states how a transport
 *      learns its process index and count; the tuner component (tuner.h,
 *      TESSERA_COMPONENT_TUNER = 5), which reprices or vetoes the candidates of the rule "auto",
 *      chosen by [collectives] tuner or TESSERA_TUNER; the parameter schema (tessera_parameter,
 *      tessera_plugin_info.num_parameters/parameters); status codes NOT_FOUND, UNAVAILABLE and
 *      ABORTED; each struct's size per minor (struct_sizes.h); versioned entry points
 *      (tessera_plugin_query_v1) so one object can serve hosts of two majors;
 *      TESSERA_EXTENSION_STRUCT_MAX. Every addition is an appended field or a new name: a 1.0-1.4
 *      plugin loads and behaves as before (a plugin built for an older minor cannot declare a
 *      tuner).
 * 1.6: the kernels sin, cos, where and cumsum (KERNELS.md, "SDK 1.6 kernels") and the indexing
 *      kernels gather and scatter_add (KERNELS.md, "Indexing"); no struct changed. A plugin built
 *      for 1.5 or older may not register them (they are not in its catalogue), and the ops that need
 *      them (embedding, index_select, gather, scatter_add and their gradients among them) report
 *      the missing kernel by name. sdk/cpp/indexing.hpp holds the indexing kernels' argument
 *      checks and messages for C++ backends.
 *      Four element types (dtype.h): bfloat16 {kDLBfloat,16}, float16 {kDLFloat,16}, int8
 *      {kDLInt,8} and uint8 {kDLUInt,8}; a host of 1.5 or older ignored kernels registered for them
 *      (with a warning), a 1.6 host calls them. A backend needs only copy and cast for each (the
 *      host computes other ops on them with the float32 / int64 kernels, casting around the call);
 *      kernels of their own for other ops are optional. The C++ helpers: half_precision.hpp (the
 *      storage types sdk::bfloat16 and sdk::float16 and the float32 conversions, host and device),
 *      sdk::kBFloat16/kFloat16/kInt8/kUInt8 and dtype_of for them, visit_any_dtype,
 *      add_half_precision_fold_kernels (fold_add/mul/maximum/minimum rounding once per step). A
 *      1.0-1.5 plugin loads and behaves as before.
 * 1.7: the normalisation kernels layer_norm, rms_norm, layer_norm_backward and rms_norm_backward
 *      (KERNELS.md, "Normalisation"), optional; no struct changed. A plugin built for 1.6 or older
 *      may not register them (they are not in its catalogue); ts::layer_norm and ts::rms_norm then
 *      compute from the element-wise and reduction kernels as before. sdk/cpp/norms.hpp holds their
 *      argument checks, the fixed summation order (lane_sum) and the row computations, for host and
 *      device code, and add_norm_kernels registers a backend's four on their key dtypes; the 1.6
 *      kernels have such helpers too (indexing.hpp: add_indexing_kernels; transformer_kernels.hpp:
 *      add_where_kernels, add_cumsum_kernels). A 1.0-1.6 plugin loads and behaves as before. */
#ifndef TESSERA_SDK_VERSION_H
#define TESSERA_SDK_VERSION_H

#define TESSERA_SDK_VERSION_MAJOR 1
#define TESSERA_SDK_VERSION_MINOR 7

#endif
