# Sourced by the build scripts (build.sh, fuzz.sh, tsan.sh):
#   configure_kiln BUILD_DIR BUILD_TYPE [-DOPTION=VALUE ...]
# configures a Ninja build of Kiln with clang-22, ccache and lld. ccache
# caches compiles that use a precompiled header only with the sloppiness
# set here (and -fno-pch-timestamp, CMakeLists.txt).
configure_kiln() {
  local build="$1" type="$2"
  shift 2
  cmake -G Ninja -S "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" -B "$build" \
    -DCMAKE_BUILD_TYPE="$type" \
    -DCMAKE_C_COMPILER=/usr/lib/llvm-22/bin/clang \
    -DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++ \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache \
    "-DCMAKE_CXX_COMPILER_LAUNCHER=/usr/bin/env;CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime;ccache" \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    "$@"
}

#   configure_kiln_asan BUILD_DIR
# configures the build of everything with ASan+UBSan (-O1) and the libFuzzer
# targets: scripts/asan.sh runs its tests, scripts/fuzz.sh its importer target.
configure_kiln_asan() {
  configure_kiln "$1" Release \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DKILN_SANITIZE=address,undefined -DKILN_FUZZ=ON
}
