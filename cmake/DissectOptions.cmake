# Resolves the AUTO options into DISSECT_HAVE_* and defines the helpers every folder uses.

function(dissect_resolve_option option found)
  if(${option} STREQUAL "ON" AND NOT ${found})
    message(FATAL_ERROR "${option}=ON but the dependency was not found")
  endif()
endfunction()

# CUDA
set(DISSECT_HAVE_CUDA OFF)
if(NOT DISSECT_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_ARCHITECTURES ${DISSECT_CUDA_ARCHS})
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(DISSECT_HAVE_CUDA ON)
  endif()
  dissect_resolve_option(DISSECT_WITH_CUDA DISSECT_HAVE_CUDA)
endif()

# rdma-core (libibverbs + libmlx5)
set(DISSECT_HAVE_MLX5 OFF)
if(NOT DISSECT_WITH_MLX5 STREQUAL "OFF")
  find_path(DISSECT_IBVERBS_INCLUDE infiniband/verbs.h)
  find_path(DISSECT_MLX5DV_INCLUDE infiniband/mlx5dv.h)
  find_library(DISSECT_IBVERBS_LIB ibverbs)
  find_library(DISSECT_MLX5_LIB mlx5)
  if(DISSECT_IBVERBS_INCLUDE AND DISSECT_MLX5DV_INCLUDE AND DISSECT_IBVERBS_LIB AND DISSECT_MLX5_LIB)
    set(DISSECT_HAVE_MLX5 ON)
  endif()
  dissect_resolve_option(DISSECT_WITH_MLX5 DISSECT_HAVE_MLX5)
endif()

# Libraries in place of hand-written parts (Debian: nlohmann-json3-dev, libcli11-dev; installed by
# scripts/bootstrap.sh): JSON for telemetry, results and the tests; CLI11 for the suite's flags.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 2.1 REQUIRED)

# MPI
set(DISSECT_HAVE_MPI OFF)
if(NOT DISSECT_WITH_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    set(DISSECT_HAVE_MPI ON)
  endif()
  dissect_resolve_option(DISSECT_WITH_MPI DISSECT_HAVE_MPI)
endif()

# Warnings and sanitizers for host code.
add_library(dissect_build_flags INTERFACE)
target_compile_options(dissect_build_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-missing-field-initializers>)
if(DISSECT_SANITIZE)
  target_compile_options(dissect_build_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(dissect_build_flags INTERFACE -fsanitize=address,undefined)
endif()
if(DISSECT_HAVE_CUDA)
  target_compile_definitions(dissect_build_flags INTERFACE DISSECT_HAVE_CUDA=1)
  target_compile_options(dissect_build_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo>)
endif()
if(DISSECT_HAVE_MLX5)
  target_compile_definitions(dissect_build_flags INTERFACE DISSECT_HAVE_MLX5=1)
endif()
if(NOT DISSECT_WITH_TELEMETRY)
  target_compile_definitions(dissect_build_flags INTERFACE DISSECT_TELEMETRY_COMPILED_OUT=1)
endif()

# dissect_add_test(NAME <name> SOURCES <files...> LIBS <targets...> LABELS <cpu|gpu|nic>)
# A test that needs hardware it does not find prints the reason on stderr and exits 77 (skipped).
find_package(GTest QUIET)
function(dissect_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main dissect_build_flags)
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" SKIP_RETURN_CODE 77 TIMEOUT ${T_TIMEOUT})
endfunction()

# Adds every sub-folder of the current source folder that has a CMakeLists.txt: one part's tests each.
function(dissect_add_part_folders)
  file(GLOB parts LIST_DIRECTORIES true ${CMAKE_CURRENT_SOURCE_DIR}/*)
  foreach(part ${parts})
    if(IS_DIRECTORY ${part} AND EXISTS ${part}/CMakeLists.txt)
      add_subdirectory(${part})
    endif()
  endforeach()
endfunction()
