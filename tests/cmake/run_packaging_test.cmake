# cmake -DMODE=find_package|add_subdirectory -DMEMO_SOURCE_DIR=... -DMEMO_BINARY_DIR=...
#       -DWORK_DIR=... [-DGENERATOR=...] [-DCXX_COMPILER=...] [-DCXX_COMPILER_LAUNCHER=...]
#       [-DBUILD_TYPE=...] [-DTORCH_DIR=...] -P run_packaging_test.cmake
#
# find_package:     installs memo from MEMO_BINARY_DIR into WORK_DIR/prefix, then configures,
#                   builds and runs tests/cmake/find_package against that prefix only.
# add_subdirectory: configures, builds and runs tests/cmake/add_subdirectory, which adds
#                   MEMO_SOURCE_DIR as a subdirectory.
#
# Each project also builds one of memo's examples as memo-package-example (find_package:
# examples/custom_layer, add_subdirectory: examples/custom_backend); it must run, and its standard
# output must equal examples/<name>/expected_output.txt when the example has one.
foreach(var IN ITEMS MODE MEMO_SOURCE_DIR MEMO_BINARY_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_packaging_test.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result COMMAND_ECHO STDOUT)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "packaging test '${MODE}': ${step} failed (${result})")
  endif()
endfunction()

# The example each mode builds from MEMO_SOURCE_DIR/examples/.
set(example_find_package custom_layer)
set(example_add_subdirectory custom_backend)
set(example "${example_${MODE}}")

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(project_dir "${MEMO_SOURCE_DIR}/tests/cmake/${MODE}")
set(build_dir "${WORK_DIR}/build")

set(configure_args -S "${project_dir}" -B "${build_dir}"
    "-DMEMO_SOURCE_DIR=${MEMO_SOURCE_DIR}" "-DMEMO_EXAMPLE=${example}")
if(GENERATOR)
  list(APPEND configure_args -G "${GENERATOR}")
endif()
if(CXX_COMPILER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(CXX_COMPILER_LAUNCHER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_COMPILER_LAUNCHER}")
endif()
if(BUILD_TYPE)
  list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
endif()
# The libtorch memo was built with (the wheel's in .venv/, found by memo's own CMakeLists): a
# project that asks for the torch component says where libtorch is, as memo-config.cmake expects.
if(TORCH_DIR)
  list(APPEND configure_args "-DTorch_DIR=${TORCH_DIR}")
endif()

# A parent make's job-server variables mean nothing to the builds below.
unset(ENV{MAKEFLAGS})
unset(ENV{MFLAGS})
unset(ENV{MAKELEVEL})

if(MODE STREQUAL "find_package")
  set(prefix "${WORK_DIR}/prefix")
  run("install" "${CMAKE_COMMAND}" --install "${MEMO_BINARY_DIR}" --prefix "${prefix}")
  foreach(installed IN ITEMS include/memo/memo.hpp share/cmake/memo/memo-config.cmake
                             share/cmake/memo/memo-config-version.cmake
                             share/cmake/memo/memo-targets.cmake
                             share/cmake/memo/memo-campaign-targets.cmake)
    if(NOT EXISTS "${prefix}/${installed}")
      message(FATAL_ERROR "packaging test 'find_package': ${prefix}/${installed} was not installed")
    endif()
  endforeach()
  # Every optional component memo was built with is installed, and must be found.
  set(components "")
  foreach(component IN ITEMS torch onnx mpi)
    if(EXISTS "${prefix}/share/cmake/memo/memo-${component}-targets.cmake")
      list(APPEND components ${component})
    endif()
  endforeach()
  message(STATUS "packaging test 'find_package': optional components installed: ${components}")
  # Comma-separated: a ';' would split the argument in two.
  list(JOIN components "," components)
  run("configure" "${CMAKE_COMMAND}" ${configure_args}
      "-DCMAKE_PREFIX_PATH=${prefix}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "-DMEMO_COMPONENTS=${components}")
  # The memo that was found must be the one just installed.
  file(STRINGS "${build_dir}/CMakeCache.txt" memo_dir_line REGEX "^memo_DIR:")
  string(REGEX REPLACE "^memo_DIR:[A-Z]*=" "" memo_dir "${memo_dir_line}")
  file(REAL_PATH "${prefix}" real_prefix)
  file(REAL_PATH "${memo_dir}" real_memo_dir)
  string(FIND "${real_memo_dir}" "${real_prefix}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "packaging test 'find_package': found memo in '${memo_dir}', not under '${prefix}'")
  endif()
elseif(MODE STREQUAL "add_subdirectory")
  run("configure" "${CMAKE_COMMAND}" ${configure_args})
else()
  message(FATAL_ERROR "run_packaging_test.cmake: unknown MODE '${MODE}'")
endif()

run("build" "${CMAKE_COMMAND}" --build "${build_dir}")

# The path of an executable the project built (single- or multi-config generators).
function(built name out)
  set(exe "${build_dir}/${name}")
  if(NOT EXISTS "${exe}")
    file(GLOB_RECURSE exe "${build_dir}/*/${name}")
  endif()
  if(NOT exe)
    message(FATAL_ERROR "packaging test '${MODE}': ${name} was not built")
  endif()
  list(GET exe 0 exe)
  set(${out} "${exe}" PARENT_SCOPE)
endfunction()

built(memo-package-test app)
run("run" "${app}")

built(memo-package-example app)
execute_process(COMMAND "${app}" RESULT_VARIABLE result OUTPUT_VARIABLE actual)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "packaging test '${MODE}': examples/${example} exited with ${result}; its output:\n${actual}")
endif()
set(expected_file "${MEMO_SOURCE_DIR}/examples/${example}/expected_output.txt")
if(EXISTS "${expected_file}")
  file(READ "${expected_file}" expected)
  if(NOT actual STREQUAL expected)
    message(FATAL_ERROR "packaging test '${MODE}': examples/${example}'s output differs from ${expected_file}\n"
                        "--- expected\n${expected}\n--- actual\n${actual}")
  endif()
endif()
message(STATUS "packaging test '${MODE}': examples/${example} built and ran")
