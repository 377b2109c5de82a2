#pragma once
// KRONEX_TARGET_CLONES: compile a hot kernel several times (x86-64-v4: AVX-512, v3: AVX2+FMA,
// and the build's default) and pick one at load time from the CPU (GCC's function
// multiversioning through an ifunc). So a library compiled without -march=native still runs its
// kernels at the host's full vector width. Empty where unsupported (clang before 16 cannot
// clone templates; non-x86 targets) or when the application defines KRONEX_NO_TARGET_CLONES.
#if !defined(KRONEX_NO_TARGET_CLONES) && defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    defined(__linux__)
#define KRONEX_TARGET_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KRONEX_TARGET_CLONES
#endif
