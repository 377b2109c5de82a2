# Which optional backends to build. The host backend needs none of this.
#   KRONEX_ENABLE_DEVICE_CPU  the device backend on a CPU "device" (Thrust with OpenMP + CBLAS),
#                             the build CI tests the device code with: target kronex::device_cpu
#   KRONEX_ENABLE_CUDA        the device backend on CUDA (nvcc, CCCL Thrust, cuBLAS):
#                             target kronex::device_cuda
#   KRONEX_ENABLE_MPI         the distributed backend (MPI): target kronex::mpi
# AUTO builds what the machine has; ON fails the configure when something is missing.
include(CheckLanguage)
set(KRONEX_ENABLE_DEVICE_CPU AUTO CACHE STRING "Build the CPU-device runtime: AUTO, ON or OFF")
set(KRONEX_ENABLE_CUDA AUTO CACHE STRING "Build the CUDA device runtime: AUTO, ON or OFF")
set(KRONEX_ENABLE_MPI AUTO CACHE STRING "Build the MPI distributed backend: AUTO, ON or OFF")

if(KRONEX_ENABLE_MPI STREQUAL "AUTO")
  find_package(MPI QUIET COMPONENTS CXX)
elseif(KRONEX_ENABLE_MPI STREQUAL "ON")
  find_package(MPI REQUIRED COMPONENTS CXX)
endif()
# mpiexec flags for the MPI tests: running as root and more ranks than cores need these with Open MPI.
set(KRONEX_MPIEXEC_FLAGS "--oversubscribe;--allow-run-as-root" CACHE STRING "Extra mpiexec flags for kronex's MPI tests")
