# inferscope_add_test(NAME source LIBS libs... [LABELS labels...] [TIMEOUT s]
#                     [PARTS suffix=function,function... ...])
# A QtTest executable registered with CTest (with PARTS: once per part, NAME_suffix running
# those test functions, each part with its own limit, plus NAME_parts, which fails when a
# test function is in no part or in two); tests run Vulkan on lavapipe with the
# Khronos validation layer and Qt on the offscreen platform (see tests/README.md). In the
# sanitizer build, LeakSanitizer reads tests/lsan.supp: leaks inside the Vulkan loader and
# driver are suppressed by name, every other leak fails the test.
#
# The Vulkan loader unloads lavapipe when the last instance goes, before LeakSanitizer looks at
# the process's memory: the driver's frames then have no name ("<unknown module>") and no
# suppression can match them. So the sanitizer build's tests preload the driver (after the
# ASan runtime, which must come first) and it stays mapped to the end.
set(INFERSCOPE_TEST_PRELOAD "")
# ASan and UBSan run the same code 2-4 times slower: waits in the tests and CTest's limits
# stretch by this factor there (tests/TestTime.hpp), and stay as written in a normal build.
set(INFERSCOPE_TEST_TIME_SCALE 1)
if(INFERSCOPE_SANITIZE)
  set(INFERSCOPE_TEST_TIME_SCALE 4)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so
                  OUTPUT_VARIABLE asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  find_library(LAVAPIPE_DRIVER NAMES vulkan_lvp)
  if(EXISTS "${asan_runtime}" AND LAVAPIPE_DRIVER)
    set(INFERSCOPE_TEST_PRELOAD ";LD_PRELOAD=${asan_runtime} ${LAVAPIPE_DRIVER}")
  endif()
endif()

function(inferscope_add_test name source)
  cmake_parse_arguments(T "" "TIMEOUT" "LIBS;LABELS;PARTS" ${ARGN})
  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE Qt6::Test ${T_LIBS})
  target_compile_definitions(${name} PRIVATE
    INFERSCOPE_TEST_DATA="${PROJECT_SOURCE_DIR}/tests/data"
    INFERSCOPE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  set(ctest_names "")
  if(T_PARTS)
    foreach(part ${T_PARTS})
      string(REPLACE "=" ";" part_fields "${part}")
      list(GET part_fields 0 suffix)
      list(GET part_fields 1 functions)
      string(REPLACE "," ";" functions "${functions}")
      add_test(NAME ${name}_${suffix} COMMAND ${name} ${functions})
      list(APPEND ctest_names ${name}_${suffix})
    endforeach()
    add_test(NAME ${name}_parts COMMAND ${CMAKE_COMMAND} "-DEXECUTABLE=$<TARGET_FILE:${name}>"
             "-DPARTS=${T_PARTS}" -P ${PROJECT_SOURCE_DIR}/cmake/CheckTestParts.cmake)
    set_tests_properties(${name}_parts PROPERTIES LABELS "${T_LABELS}" TIMEOUT 60
                         ENVIRONMENT "QT_QPA_PLATFORM=offscreen")
  else()
    add_test(NAME ${name} COMMAND ${name})
    set(ctest_names ${name})
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  math(EXPR T_TIMEOUT "${T_TIMEOUT} * ${INFERSCOPE_TEST_TIME_SCALE}")
  # QtTest's own watchdog (5 minutes a function unless told) gets the same limit as CTest,
  # so a slow real-model check on busy cores is stopped by one limit, the one stated here.
  math(EXPR watchdog_ms "${T_TIMEOUT} * 1000")
  set_tests_properties(${ctest_names} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}"
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;INFERSCOPE_VALIDATION=1;QTEST_FUNCTION_TIMEOUT=${watchdog_ms};INFERSCOPE_TEST_TIME_SCALE=${INFERSCOPE_TEST_TIME_SCALE};LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/lsan.supp:print_suppressions=0${INFERSCOPE_TEST_PRELOAD}")
endfunction()
