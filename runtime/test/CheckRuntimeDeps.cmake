# Fails if libkiln_runtime.so (LIB) has a NEEDED entry on MLIR, LLVM or
# protobuf. Run as: cmake -DLIB=path/to/libkiln_runtime.so -P <this file>
find_program(READELF NAMES readelf llvm-readelf
  PATHS /usr/lib/llvm-22/bin REQUIRED)
execute_process(COMMAND ${READELF} -d ${LIB}
  OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d ${LIB} failed")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" needed "${dynamic}")
foreach(entry IN LISTS needed)
  if(entry MATCHES "libMLIR|libLLVM|libprotobuf|libonnx|libcuda|libamdhip")
    message(FATAL_ERROR "kiln_runtime must not depend on: ${entry}")
  endif()
endforeach()
list(LENGTH needed count)
message(STATUS "kiln_runtime: ${count} NEEDED entries, none forbidden")
