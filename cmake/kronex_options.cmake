# Which optional backends to build. The host backend needs none of this.
#   KRONEX_ENABLE_DEVICE_CPU  the device backend on a CPU "device" (Thrust with OpenMP + CBLAS),
#                             the build CI tests the device code with: target kronex::device_cpu
#   KRONEX_ENABLE_CUDA        the device backend on CUDA (nvcc, CCCL Thrust, cuBLAS, cuSPARSE):
#                             target kronex::device_cuda
#   KRONEX_ENABLE_MPI         the distributed backend (MPI): target kronex::mpi
#   KRONEX_ENABLE_OPENMP      threads in host plans (OpenMP, linked into kronex::kronex)
# AUTO builds what the machine has; ON fails the configure when something is missing.
include(CheckLanguage)
set(KRONEX_ENABLE_DEVICE_CPU AUTO CACHE STRING "Build the CPU-device runtime: AUTO, ON or OFF")
set(KRONEX_ENABLE_CUDA AUTO CACHE STRING "Build the CUDA device runtime: AUTO, ON or OFF")
set(KRONEX_ENABLE_MPI AUTO CACHE STRING "Build the MPI distributed backend: AUTO, ON or OFF")
set(KRONEX_ENABLE_OPENMP AUTO CACHE STRING "Thread host plans with OpenMP: AUTO, ON or OFF")

if(KRONEX_ENABLE_MPI STREQUAL "AUTO")
  find_package(MPI QUIET COMPONENTS CXX)
elseif(KRONEX_ENABLE_MPI STREQUAL "ON")
  find_package(MPI REQUIRED COMPONENTS CXX)
endif()
# KRONEX_MPIEXEC_FLAGS: extra mpiexec flags for kronex's MPI tests (a ;-list, put before the
# program). The tests start up to 4 ranks, which Open MPI refuses on fewer cores without
# --oversubscribe, and Open MPI refuses to run as root without --allow-run-as-root. Both flags
# are Open MPI's own (MPICH's mpiexec rejects them), so the default holds --oversubscribe only
# when mpiexec is Open MPI's, and --allow-run-as-root only then and when configuring as root.
# Set it on the command line to override, e.g. -DKRONEX_MPIEXEC_FLAGS="" or "--bind-to;none".
set(kronex_default_mpiexec_flags "")
if(MPIEXEC_EXECUTABLE AND NOT DEFINED CACHE{KRONEX_MPIEXEC_FLAGS})
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE kronex_mpiexec_version
                  ERROR_VARIABLE kronex_mpiexec_version RESULT_VARIABLE kronex_mpiexec_rc TIMEOUT 20)
  # Open MPI 4 prints "mpiexec (OpenRTE) 4.1.4", Open MPI 5 "mpiexec (Open MPI) 5.0.3".
  if(kronex_mpiexec_version MATCHES "OpenRTE|Open MPI|open-mpi\\.org")
    list(APPEND kronex_default_mpiexec_flags --oversubscribe)
    execute_process(COMMAND id -u OUTPUT_VARIABLE kronex_uid OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(kronex_uid STREQUAL "0")
      list(APPEND kronex_default_mpiexec_flags --allow-run-as-root)
    endif()
  endif()
endif()
set(KRONEX_MPIEXEC_FLAGS "${kronex_default_mpiexec_flags}" CACHE STRING
    "Extra mpiexec flags for kronex's MPI tests (default: --oversubscribe with Open MPI, and --allow-run-as-root as root)")
