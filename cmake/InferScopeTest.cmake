# inferscope_add_test(NAME source LIBS libs... [LABELS labels...] [TIMEOUT s])
# A QtTest executable registered with CTest; tests run Vulkan on lavapipe with the
# Khronos validation layer and Qt on the offscreen platform (see tests/README.md). In the
# sanitizer build, LeakSanitizer reads tests/lsan.supp: leaks inside the Vulkan loader and
# driver are suppressed by name, every other leak fails the test.
function(inferscope_add_test name source)
  cmake_parse_arguments(T "" "TIMEOUT" "LIBS;LABELS" ${ARGN})
  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE Qt6::Test ${T_LIBS})
  target_compile_definitions(${name} PRIVATE
    INFERSCOPE_TEST_DATA="${PROJECT_SOURCE_DIR}/tests/data"
    INFERSCOPE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_test(NAME ${name} COMMAND ${name})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}"
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;INFERSCOPE_VALIDATION=1;LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/lsan.supp:print_suppressions=0")
endfunction()
