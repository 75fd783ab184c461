# tessera_add_plugin(<name> SOURCES <files...> [LINK <libs...>] [OUTPUT_DIRECTORY <dir>])
#
# Builds one Tessera plugin: a MODULE library libtessera-<name>.so that exports only its entry
# points, tessera_plugin_query and the versioned tessera_plugin_query_v<major> (hidden visibility
# plus a linker version script) and is linked with
# --no-undefined, so a missing symbol fails the build instead of the load. Works in the Tessera tree
# and out of tree after find_package(Tessera).
set(_TESSERA_PLUGIN_MODULE_DIR "${CMAKE_CURRENT_LIST_DIR}")

function(tessera_add_plugin name)
  cmake_parse_arguments(PLUGIN "" "OUTPUT_DIRECTORY" "SOURCES;LINK" ${ARGN})
  set(target "tessera-${name}")
  add_library(${target} MODULE ${PLUGIN_SOURCES})
  set(version_script "${CMAKE_CURRENT_BINARY_DIR}/${target}.map")
  file(WRITE "${version_script}" "{ global: tessera_plugin_query; tessera_plugin_query_v*; local: *; };\n")
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    INSTALL_RPATH "")
  if(PLUGIN_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${PLUGIN_OUTPUT_DIRECTORY}")
  elseif(DEFINED TESSERA_PLUGIN_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${TESSERA_PLUGIN_OUTPUT_DIRECTORY}")
  endif()
  target_link_options(${target} PRIVATE "LINKER:--no-undefined" "LINKER:--version-script=${version_script}")
  if(TARGET Tessera::sdk)
    target_link_libraries(${target} PRIVATE Tessera::sdk ${PLUGIN_LINK})
  else()
    target_link_libraries(${target} PRIVATE tessera_sdk ${PLUGIN_LINK})
  endif()
endfunction()
