# cmake -DEXE=<program> -DEXPECTED=<file> -P run_and_compare.cmake
# Runs <program> and fails unless it exits with 0 and its standard output equals <file>.
foreach(var IN ITEMS EXE EXPECTED)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_and_compare.cmake: -D${var}=... is required")
  endif()
endforeach()

execute_process(COMMAND "${EXE}" RESULT_VARIABLE result OUTPUT_VARIABLE actual)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${EXE} exited with ${result}; its output:\n${actual}")
endif()
file(READ "${EXPECTED}" expected)
if(NOT actual STREQUAL expected)
  message(FATAL_ERROR "${EXE}: output differs from ${EXPECTED}\n--- expected\n${expected}\n--- actual\n${actual}")
endif()
