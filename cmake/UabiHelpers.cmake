# Helper functions shared by the per-directory CMakeLists.txt files.

function(uabi_common_flags)
  add_compile_options(-Wall -Wextra -Werror)
  # Kernel C follows kernel conventions (unused parameters in ops tables).
  add_compile_options($<$<COMPILE_LANGUAGE:C>:-Wno-unused-parameter>)
  if(UABI_SANITIZE)
    add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                        -fno-sanitize-recover=undefined)
    add_link_options(-fsanitize=address,undefined)
  endif()
  if(UABI_FUZZ)
    add_compile_options(-fsanitize=fuzzer-no-link)
  endif()
endfunction()

# uabi_gtest(NAME SOURCES... [LIBS ...] [LABELS ...])
function(uabi_gtest name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  add_test(NAME ${name} COMMAND ${name})
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()
