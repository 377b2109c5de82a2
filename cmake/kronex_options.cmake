# Which optional backends to build. The host backend needs none of this.
#   KRONEX_ENABLE_DEVICE_CPU  the device backend on a CPU "device" (Thrust with OpenMP + CBLAS),
#                             the build CI tests the device code with: target kronex::device_cpu
#   KRONEX_ENABLE_CUDA        the device backend on CUDA (nvcc, CCCL Thrust, cuBLAS):
#                             target kronex::device_cuda
#   KRONEX_ENABLE_MPI         detection only in this release
# AUTO builds what the machine has; ON fails the configure when something is missing.
include(CheckLanguage)
set(KRONEX_ENABLE_DEVICE_CPU AUTO CACHE STRING "Build the CPU-device runtime: AUTO, ON or OFF")
set(KRONEX_ENABLE_CUDA AUTO CACHE STRING "Build the CUDA device runtime: AUTO, ON or OFF")
set(KRONEX_ENABLE_MPI AUTO CACHE STRING "Build the MPI distributed backend: AUTO, ON or OFF")

if(KRONEX_ENABLE_MPI STREQUAL "AUTO")
  find_package(MPI QUIET COMPONENTS CXX)
endif()
