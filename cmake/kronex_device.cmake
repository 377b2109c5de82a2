# The device runtimes: one compiled library per device system, built from the same sources
# (src/device/thrust_ops.inl is the shared Thrust code). Header code never sees Thrust; it calls
# these libraries through raw pointers and sizes (include/kronex/backends/device/runtime.hpp),
# so Thrust, its device system and its include path are PRIVATE to each runtime: consumers get
# no Thrust flags and may use any Thrust (or none) themselves.
#
# kronex::device_cpu uses the system's Thrust (/usr/include/thrust, Debian's 1.17) with
# THRUST_DEVICE_SYSTEM_OMP; kronex::device_cuda uses the CUDA toolkit's CCCL Thrust, cuBLAS for
# the GEMMs and cuSPARSE for the sparse matrix-vector product.
set(kronex_device_targets "")

# --- CPU device -------------------------------------------------------------------------------
set(kronex_device_cpu_ok FALSE)
if(NOT KRONEX_ENABLE_DEVICE_CPU STREQUAL "OFF")
  find_package(OpenMP COMPONENTS CXX)
  find_package(BLAS)
  find_path(KRONEX_SYSTEM_THRUST_DIR thrust/version.h PATHS /usr/include NO_CMAKE_PATH NO_CMAKE_ENVIRONMENT_PATH)
  find_path(KRONEX_CBLAS_DIR cblas.h)
  if(OpenMP_CXX_FOUND AND BLAS_FOUND AND KRONEX_SYSTEM_THRUST_DIR AND KRONEX_CBLAS_DIR)
    set(kronex_device_cpu_ok TRUE)
  elseif(KRONEX_ENABLE_DEVICE_CPU STREQUAL "ON")
    message(FATAL_ERROR "kronex: the CPU-device runtime needs Thrust (libthrust-dev), OpenMP and CBLAS "
                        "(libopenblas-dev); found Thrust='${KRONEX_SYSTEM_THRUST_DIR}' OpenMP=${OpenMP_CXX_FOUND} "
                        "BLAS=${BLAS_FOUND} cblas.h='${KRONEX_CBLAS_DIR}'")
  endif()
endif()
if(kronex_device_cpu_ok)
  add_library(kronex_device_cpu STATIC src/device/cpu/runtime_cpu.cpp src/device/cpu/blas_host.cpp)
  add_library(kronex::device_cpu ALIAS kronex_device_cpu)
  set_target_properties(kronex_device_cpu PROPERTIES EXPORT_NAME device_cpu POSITION_INDEPENDENT_CODE ON)
  target_compile_definitions(kronex_device_cpu PRIVATE THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP)
  # PRIVATE on a static library: consumers link OpenMP's and BLAS's libraries, without their flags.
  target_link_libraries(kronex_device_cpu PUBLIC kronex PRIVATE OpenMP::OpenMP_CXX BLAS::BLAS $<BUILD_INTERFACE:kronex_warnings>)
  list(APPEND kronex_device_targets kronex_device_cpu)
endif()

# --- CUDA -------------------------------------------------------------------------------------
set(kronex_device_cuda_ok FALSE)
if(NOT KRONEX_ENABLE_CUDA STREQUAL "OFF")
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # nvcc's default (sm_75) and "native" (needs a GPU at configure time) are both wrong for the
    # machines this targets; H100/H200 are sm_90. Override with -DCMAKE_CUDA_ARCHITECTURES=...
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    include(${CMAKE_CURRENT_LIST_DIR}/kronex_find_cudatoolkit.cmake)
    kronex_find_cudatoolkit()
    find_path(KRONEX_CCCL_DIR thrust/version.h HINTS ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES cccl NO_DEFAULT_PATH)
    if(CUDAToolkit_FOUND AND TARGET CUDA::cublas AND TARGET CUDA::cusparse)
      set(kronex_device_cuda_ok TRUE)
    endif()
  endif()
  if(NOT kronex_device_cuda_ok AND KRONEX_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "kronex: KRONEX_ENABLE_CUDA=ON but no usable CUDA compiler, cuBLAS and cuSPARSE were found")
  endif()
endif()
if(kronex_device_cuda_ok)
  add_library(kronex_device_cuda STATIC src/device/cuda/runtime_cuda.cu src/device/cuda/blas_cublas.cu
                                     src/device/cuda/sparse_cusparse.cu)
  add_library(kronex::device_cuda ALIAS kronex_device_cuda)
  set_target_properties(kronex_device_cuda PROPERTIES EXPORT_NAME device_cuda POSITION_INDEPENDENT_CODE ON
                                                      CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
  if(KRONEX_CCCL_DIR)
    target_include_directories(kronex_device_cuda BEFORE PRIVATE ${KRONEX_CCCL_DIR})
  endif()
  target_compile_options(kronex_device_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
  # PRIVATE on a static library: the exported link interface still names CUDA::cudart,
  # CUDA::cublas and CUDA::cusparse ($<LINK_ONLY:...>), which kronexConfig.cmake's
  # find_package(CUDAToolkit) defines for consumers.
  target_link_libraries(kronex_device_cuda PUBLIC kronex PRIVATE CUDA::cudart CUDA::cublas CUDA::cusparse)
  list(APPEND kronex_device_targets kronex_device_cuda)
endif()

message(STATUS "kronex: host backend: on; CPU-device runtime: ${kronex_device_cpu_ok}; "
               "CUDA runtime: ${kronex_device_cuda_ok} (architectures: ${CMAKE_CUDA_ARCHITECTURES}); "
               "MPI: ${MPI_CXX_FOUND}")
