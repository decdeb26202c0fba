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

# In a sanitizer build, uninstrumented programs that preload one of our
# instrumented libraries must load the sanitizer runtimes first.  Sets
# OUT_VAR to "libasan.so:libubsan.so" there, to "" otherwise.
function(uabi_sanitizer_preload out_var)
  set(list "")
  if(UABI_SANITIZE)
    foreach(rt asan ubsan)
      execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=lib${rt}.so
                      OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE)
      list(APPEND list ${path})
    endforeach()
    list(JOIN list ":" list)
  endif()
  set(${out_var} "${list}" PARENT_SCOPE)
endfunction()
