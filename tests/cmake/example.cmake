# Shared by the find_package and add_subdirectory test projects: memo-package-example, built from
# one of memo's examples (examples/${MEMO_EXAMPLE}/*.cpp, MEMO_EXAMPLE given by
# run_packaging_test.cmake) and linked to memo::campaign as a user's own target would be. memo's source
# tree gives the example's sources, never its headers.
if(NOT MEMO_SOURCE_DIR OR NOT MEMO_EXAMPLE)
  message(FATAL_ERROR "configure with -DMEMO_SOURCE_DIR=<memo source tree> -DMEMO_EXAMPLE=<example>")
endif()
file(GLOB example_sources "${MEMO_SOURCE_DIR}/examples/${MEMO_EXAMPLE}/*.cpp")
if(NOT example_sources)
  message(FATAL_ERROR "no sources in ${MEMO_SOURCE_DIR}/examples/${MEMO_EXAMPLE}/")
endif()
add_executable(memo-package-example ${example_sources})
target_link_libraries(memo-package-example PRIVATE memo::campaign)
