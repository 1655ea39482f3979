#!/usr/bin/env bash
# Builds the runtime and its unit tests with ThreadSanitizer into build-tsan/
# and runs them: the thread pool, many sessions of one model on many threads
# (Runtime.ManySessionsOnManyThreads), one session entered by a second thread
# (Runtime.SessionInAnotherCallIsBusy), workgroups that throw on pool threads
# (Faults.*) and CUDA sessions on several threads against the fake driver
# (CudaFaults.*). Fails on any data race.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KILN_TSAN_BUILD_DIR:-$root/build-tsan}"
source "$root/scripts/configure.sh"
# Configured every time (cheap): the options below are what this build is.
configure_kiln "$build" RelWithDebInfo -DKILN_BUILD_COMPILER=OFF -DKILN_SANITIZE=thread >/dev/null
tests=(kiln-runtime-tests kiln-runtime-fault-tests kiln-runtime-cuda-fault-tests
  kiln-runtime-hip-fault-tests)
ninja -C "$build" "${tests[@]}" >/dev/null
for test in "${tests[@]}"; do
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
    "$build/bin/$test" --gtest_brief=1
done
