# One CMake target per layer of docs/architecture.md, linked only to the
# layers that the table there lets it use, so that the compiler, not a
# document, refuses an include of a layer it may not use.
#
# All public headers live in include/rampart/<layer>/, so include/ itself
# would show every layer to everyone. Each layer gets an include root of its
# own in the build tree instead, <build>/layer-include/<layer>/rampart/<layer>,
# a link to include/rampart/<layer>: a target sees the headers of its own
# layer and of the layers it links (PUBLIC, hence transitively), no others.
# (Diagnostics name headers by that path.) The install tree keeps one
# include/ for every target: there the check has been done.
#
# A layer's detail/ folder is part of its include root, because its public
# headers include it: that rule is checked by tests/layers/check_layers.sh,
# with the direct includes against the table.

# The include root of a layer, made on first use.
function(rampart_layer_include_root layer out)
  set(root ${PROJECT_BINARY_DIR}/layer-include/${layer})
  if(NOT IS_DIRECTORY ${PROJECT_SOURCE_DIR}/include/rampart/${layer})
    message(FATAL_ERROR "rampart: layer ${layer} has no include/rampart/${layer}/")
  endif()
  file(MAKE_DIRECTORY ${root}/rampart)
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/rampart/${layer} ${root}/rampart/${layer} SYMBOLIC)
  set(${out} ${root} PARENT_SCOPE)
endfunction()

# rampart_add_layer(<layer> [SOURCES src...] [USES layer...]
#                   [PUBLIC item...] [PRIVATE item...])
#
# Makes rampart_<layer> (alias rampart::<layer>, exported as rampart::<layer>):
# a library of SOURCES, or an INTERFACE target without them, with the include
# root of <layer>, linked PUBLIC to rampart_<used> for each layer it USES
# (each must be defined already, so layers are added in the table's order),
# to PUBLIC and PRIVATE items besides (other libraries). The umbrella target
# `rampart` links it, and it is installed in the export set rampartTargets.
# A later layer (src/pgas/CMakeLists.txt, say) calls this the same way.
function(rampart_add_layer layer)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;USES;PUBLIC;PRIVATE")
  set(target rampart_${layer})
  if(arg_SOURCES)
    add_library(${target} ${arg_SOURCES})
    set(scope PUBLIC)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  else()
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
    if(arg_PRIVATE)
      message(FATAL_ERROR "rampart: layer ${layer} has no sources, so nothing PRIVATE")
    endif()
  endif()
  add_library(rampart::${layer} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${layer})
  rampart_layer_include_root(${layer} root)
  target_include_directories(${target} ${scope}
    $<BUILD_INTERFACE:${root}> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  foreach(used IN LISTS arg_USES)
    if(NOT TARGET rampart_${used})
      message(FATAL_ERROR "rampart: layer ${layer} uses ${used}, which is not defined (yet)")
    endif()
    target_link_libraries(${target} ${scope} rampart_${used})
  endforeach()
  target_link_libraries(${target} ${scope} ${arg_PUBLIC})
  if(arg_PRIVATE)
    target_link_libraries(${target} PRIVATE ${arg_PRIVATE})
  endif()
  target_link_libraries(rampart INTERFACE ${target})
  install(TARGETS ${target} EXPORT rampartTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set_property(GLOBAL APPEND PROPERTY RAMPART_LAYERS ${layer})
endfunction()
