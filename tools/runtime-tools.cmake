# Runtime-side tools: kiln-run, kiln-bench and the KilnTensorFile library
# (also used by kiln-onnx-test). Included from the top-level CMakeLists.txt;
# needs the kiln_runtime target and find_package(ONNX) to have run.
include_guard(GLOBAL)
set(KILN_TOOLS_DIR ${CMAKE_CURRENT_LIST_DIR})

# Tensor files (.pb TensorProto, .npy) and comparison; no LLVM, no runtime.
add_library(KilnTensorFile STATIC ${KILN_TOOLS_DIR}/common/TensorFile.cpp)
target_include_directories(KilnTensorFile PUBLIC
  ${KILN_TOOLS_DIR} ${PROJECT_SOURCE_DIR}/runtime/include)
target_compile_definitions(KilnTensorFile PUBLIC ONNX_NAMESPACE=onnx ONNX_ML=1)
target_link_libraries(KilnTensorFile PUBLIC onnx_proto protobuf::libprotobuf)

add_library(KilnToolSupport STATIC ${KILN_TOOLS_DIR}/common/ToolSupport.cpp)
target_link_libraries(KilnToolSupport PUBLIC KilnTensorFile kiln_runtime)

add_executable(kiln-run ${KILN_TOOLS_DIR}/kiln-run.cpp)
target_link_libraries(kiln-run PRIVATE KilnToolSupport)

add_executable(kiln-bench ${KILN_TOOLS_DIR}/kiln-bench.cpp)
target_link_libraries(kiln-bench PRIVATE KilnToolSupport)
