# Fails when a file under core/src includes from a higher layer (core/src/README.md gives the order).
#   cmake -DSOURCE_DIR=<repo root> -P check_layers.cmake
# Written in CMake script mode so that it needs nothing beyond the CMake that builds the project.
cmake_minimum_required(VERSION 3.25)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_layers.cmake: pass -DSOURCE_DIR=<repository root>")
endif()
set(src "${SOURCE_DIR}/core/src")

# The layers, lowest first; a file may include its own layer and any lower one. Keep in step with
# core/src/README.md.
set(layers log plugin dispatch tensor world ranks comm mesh dtensor observe spawn nn optim models parallel pipelining checkpoint api)
# Folders that are part of another folder's layer. autograd is the tensor layer's: every op records
# its gradient there, and backward runs ops (the two call each other by nature, as in PyTorch).
set(folder_layer_autograd tensor)

# Public headers (core/include/tessera/*.hpp) belong to the layer that implements what they
# declare. Those not named here are vocabulary (value types, errors, the tensor API every layer
# passes around) and may be included from anywhere.
set(public_config api)
set(public_plugins plugin)
set(public_backend_info api)
set(public_observe observe)
set(public_dist comm)
set(public_dist_functional comm)
set(public_process_group comm)
set(public_device_mesh mesh)
set(public_dtensor dtensor)
set(public_dtensor_ops dtensor)
set(public_placement dtensor)
set(public_world world)
set(public_spawn spawn)
set(public_local ranks)
set(public_optim optim)
set(public_nn nn)
set(public_models models)
set(public_parallel parallel)
set(public_pipelining pipelining)
set(public_lr_scheduler optim)
set(public_checkpoint checkpoint)
# Public header folders (core/include/tessera/<folder>/*.hpp) that belong to one layer.
set(public_folder_nn nn)
set(public_folder_models models)
set(public_folder_parallel parallel)

# Known upward includes still to be removed, one "file|included" entry each (see core/src/README.md,
# "Exceptions"). An entry that no longer occurs is reported too, so the list only shrinks.
set(known_exceptions
  # plugin: the registry keeps typed tables of what plugins provide (dispatch::Backend,
  # comm::CollectiveAlgorithm, comm::Tuner, dtensor::PlacementStrategy). Fix: per-kind component tables
  # registered by the layer that owns each kind.
  "plugin/registry.hpp|comm/algorithm.hpp"
  "plugin/registry.hpp|comm/tuner.hpp"
  "plugin/registry.hpp|dispatch/backend.hpp"
  "plugin/registry.hpp|dtensor/placement_strategy.hpp"
  # tensor makes LocalTensorImpl for tensors created under LocalMode. Fix: a factory hook that
  # ranks installs.
  "tensor/tensor.cpp|ranks/local_tensor_impl.hpp"
  "tensor/factories.cpp|tessera/local.hpp"
)

function(layer_rank name out)
  list(FIND layers "${name}" rank)
  set(${out} ${rank} PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE files RELATIVE "${src}" "${src}/*.hpp" "${src}/*.cpp")
list(SORT files)
set(violations "")
set(used_exceptions "")
foreach(file IN LISTS files)
  string(REGEX MATCH "^[^/]+" from_layer "${file}")
  if(file STREQUAL from_layer)
    continue()  # a file directly in core/src (none today) belongs to no layer
  endif()
  if(DEFINED folder_layer_${from_layer})
    set(from_layer "${folder_layer_${from_layer}}")
  endif()
  layer_rank("${from_layer}" from_rank)
  if(from_rank EQUAL -1)
    list(APPEND violations "core/src/${file}: folder '${from_layer}' is in no layer; add it to the order in core/src/README.md and tests/architecture/check_layers.cmake")
    continue()
  endif()
  file(STRINGS "${src}/${file}" lines)
  set(line_number 0)
  foreach(line IN LISTS lines)
    math(EXPR line_number "${line_number} + 1")
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\"")
      continue()
    endif()
    set(included "${CMAKE_MATCH_1}")
    if(included MATCHES "^tessera/sdk/")
      continue()  # the SDK is below every layer
    elseif(included MATCHES "^tessera/([a-z_/]+)\\.hpp$")
      set(header "${CMAKE_MATCH_1}")
      string(REPLACE "/" "_" key "${header}")
      string(REGEX MATCH "^[a-z_]+" folder "${header}")
      if(DEFINED public_${key})
        set(to_layer "${public_${key}}")
      elseif(header MATCHES "/" AND DEFINED public_folder_${folder})
        set(to_layer "${public_folder_${folder}}")
      else()
        continue()
      endif()
    elseif(included MATCHES "^([a-z_]+)/")
      set(to_layer "${CMAKE_MATCH_1}")
      if(DEFINED folder_layer_${to_layer})
        set(to_layer "${folder_layer_${to_layer}}")
      endif()
    else()
      continue()
    endif()
    layer_rank("${to_layer}" to_rank)
    if(to_rank EQUAL -1)
      list(APPEND violations "core/src/${file}:${line_number}: includes \"${included}\" from '${to_layer}', which is in no layer")
    elseif(to_rank GREATER from_rank)
      if("${file}|${included}" IN_LIST known_exceptions)
        list(APPEND used_exceptions "${file}|${included}")
      else()
        list(APPEND violations "core/src/${file}:${line_number}: layer '${from_layer}' includes \"${included}\" from higher layer '${to_layer}'")
      endif()
    endif()
  endforeach()
endforeach()

foreach(entry IN LISTS known_exceptions)
  if(NOT entry IN_LIST used_exceptions)
    list(APPEND violations "known exception '${entry}' no longer occurs: remove it from known_exceptions")
  endif()
endforeach()

list(LENGTH violations count)
if(count GREATER 0)
  list(JOIN violations "\n  " text)
  list(JOIN layers " < " order)
  message(FATAL_ERROR "${count} include(s) break the layer order (${order}):\n  ${text}")
endif()
list(LENGTH files checked)
list(LENGTH used_exceptions known)
message(STATUS "layer order holds: ${checked} files checked, ${known} known exception(s)")
