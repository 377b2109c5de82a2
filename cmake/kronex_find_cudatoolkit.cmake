# kronex_find_cudatoolkit([args...]): find_package(CUDAToolkit [args...]), for kronex's build and
# for projects that use an installed kronex::device_cuda (kronexConfig.cmake includes this file).
#
# Why not find_package alone: CMake 3.25's FindCUDAToolkit (Debian 12's) marks CUDA::nvToolsExt
# deprecated without checking that it exists, whenever the calling project requires CMake 3.25 or
# later. CUDA 12.9 and later ship no nvToolsExt, so the configure fails with "set_property could
# not find TARGET CUDA::nvToolsExt". The module reads CMAKE_MINIMUM_REQUIRED_VERSION to decide:
# a lower value for the duration of the call skips only that deprecation mark (policies are set
# by cmake_minimum_required, not by this variable, so nothing else changes).
macro(kronex_find_cudatoolkit)
  set(_kronex_saved_minimum_required "${CMAKE_MINIMUM_REQUIRED_VERSION}")
  set(CMAKE_MINIMUM_REQUIRED_VERSION 3.24)
  find_package(CUDAToolkit ${ARGN})
  set(CMAKE_MINIMUM_REQUIRED_VERSION "${_kronex_saved_minimum_required}")
  unset(_kronex_saved_minimum_required)
endmacro()
