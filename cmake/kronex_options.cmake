# Detection of the optional backends. Nothing in this release's code paths depends on them; the
# results are reported so a build log says what a later backend would find.
include(CheckLanguage)
set(KRONEX_ENABLE_CUDA AUTO CACHE STRING "Build the CUDA device backend: AUTO, ON or OFF")
set(KRONEX_ENABLE_MPI AUTO CACHE STRING "Build the MPI distributed backend: AUTO, ON or OFF")

if(KRONEX_ENABLE_CUDA STREQUAL "AUTO")
  check_language(CUDA)
  set(KRONEX_HAVE_CUDA_COMPILER ${CMAKE_CUDA_COMPILER})
endif()
if(KRONEX_ENABLE_MPI STREQUAL "AUTO")
  find_package(MPI QUIET COMPONENTS CXX)
endif()
message(STATUS "kronex: host backend: on; CUDA compiler: ${KRONEX_HAVE_CUDA_COMPILER} (device backend not in this release); "
               "MPI: ${MPI_CXX_FOUND} (distributed backend not in this release)")
