# Install rules and the Debian package (`cpack` in the build folder, or
# scripts/package.sh): the tools in bin/, the runtime library in lib/ and
# its C headers in include/kiln/, the ROCm layout kiln-compile links GPU
# code with in lib/kiln/rocm, and the Python package in
# lib/python3/dist-packages/kiln, where Debian's python3 finds it.

set(KILN_RUNTIME_TOOLS kiln-run kiln-bench)
# The tools find libkiln_runtime.so in ../lib, and LLVM's libraries where
# the build found them.
set_target_properties(${KILN_RUNTIME_TOOLS} PROPERTIES
  INSTALL_RPATH "$ORIGIN/../lib" INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS ${KILN_RUNTIME_TOOLS} RUNTIME DESTINATION bin)
install(TARGETS kiln_runtime LIBRARY DESTINATION lib)
install(FILES runtime/include/kiln/runtime.h
  runtime/include/kiln/artifact_version.h DESTINATION include/kiln)

if(KILN_BUILD_COMPILER)
  set(KILN_COMPILER_TOOLS kiln-compile kiln-onnx-test)
  set_target_properties(${KILN_COMPILER_TOOLS} PROPERTIES
    INSTALL_RPATH "$ORIGIN/../lib" INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS ${KILN_COMPILER_TOOLS} RUNTIME DESTINATION bin)
  # Links to Debian's ld.lld and ROCm device libraries (bin/../lib/kiln/rocm
  # is where kiln-compile looks first).
  install(DIRECTORY ${PROJECT_BINARY_DIR}/lib/kiln/rocm DESTINATION lib/kiln)
endif()

set(CPACK_PACKAGE_NAME kiln)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Kiln developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Kiln: an ONNX compiler for CPUs and NVIDIA and AMD GPUs, and its runtime")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
# Libraries the binaries link come from dpkg-shlibdeps; these are what they
# run or import instead: ld.lld (CPU kernels), the ROCm device libraries
# (--target=rocm) and NumPy (the Python package).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "lld-22, python3, python3-numpy")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "rocm-device-libs")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
include(CPack)
