#!/usr/bin/env bash
# Lays out an installed copy of the C++ API from built files (tools/install builds them first;
# //tests/install:install_test calls this on the files Bazel built for it).
#   install_layout.sh ARCHIVE LINKFLAGS HEADER VERSION PREFIX
# The pkg-config and CMake files locate the prefix relative to themselves, so an installed tree
# can be moved or copied as a whole.
set -euo pipefail
if [ $# -ne 5 ]; then
  echo "usage: install_layout.sh ARCHIVE LINKFLAGS HEADER VERSION PREFIX" >&2
  exit 2
fi
archive="$1" linkflags_file="$2" header="$3" version="$4" prefix="$5"
linkflags="$(tr -s ' \n' ' ' <"$linkflags_file" | sed 's/^ *//; s/ *$//')"

mkdir -p "$prefix/include/parity" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/Parity"
install -m 0644 "$header" "$prefix/include/parity/parity.h"
install -m 0644 "$archive" "$prefix/lib/libparity.a"

cat >"$prefix/lib/pkgconfig/parity.pc" <<PC
prefix=\${pcfiledir}/../..
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: parity
Description: Simulator and verifier for NVIDIA Hopper asynchronous copies and mbarriers (C++ API)
Version: ${version}
Cflags: -std=c++20 -I\${includedir}
Libs: -L\${libdir} -lparity ${linkflags}
PC

# Link flags of the archive's closure, as CMake list items (e.g. -lpthread).
cmake_links="$(printf '%s' "$linkflags" | tr ' ' ';')"
cat >"$prefix/lib/cmake/Parity/ParityConfig.cmake" <<CMAKE
# find_package(Parity) for Parity's C++ API: defines the imported target Parity::parity.
get_filename_component(_parity_prefix "\${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET Parity::parity)
  add_library(Parity::parity STATIC IMPORTED)
  set_target_properties(Parity::parity PROPERTIES
    IMPORTED_LOCATION "\${_parity_prefix}/lib/libparity.a"
    INTERFACE_INCLUDE_DIRECTORIES "\${_parity_prefix}/include"
    INTERFACE_COMPILE_FEATURES cxx_std_20
    INTERFACE_LINK_LIBRARIES "${cmake_links}")
endif()
unset(_parity_prefix)
CMAKE

cat >"$prefix/lib/cmake/Parity/ParityConfigVersion.cmake" <<CMAKE
# Parity ${version}: compatible with requests for the same major version.
set(PACKAGE_VERSION "${version}")
string(REGEX MATCH "^[0-9]+" _parity_major "\${PACKAGE_VERSION}")
string(REGEX MATCH "^[0-9]+" _parity_want_major "\${PACKAGE_FIND_VERSION}")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif(PACKAGE_FIND_VERSION AND NOT _parity_major STREQUAL _parity_want_major)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
CMAKE
echo "installed Parity ${version} into $prefix"
