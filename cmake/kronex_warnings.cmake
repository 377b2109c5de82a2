# Warnings for kronex's own targets (tests, benchmarks, examples): never imposed on users.
# -Werror=switch makes a step kind that a backend forgets to handle a build error.
add_library(kronex_warnings INTERFACE)
target_compile_options(kronex_warnings INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Werror=switch -Werror=return-type>)
