//===- Status.h - the runtime's errors --------------------------*- C++ -*-===//
//
// Every failing runtime call records a message for kiln_last_error() and
// returns a status; nothing below the C API throws across it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_STATUS_H
#define KILN_RUNTIME_STATUS_H

#include "kiln/runtime.h"

#include <string>
#include <vector>

namespace kiln {

/// Records `message` as the calling thread's last error and returns `code`.
kiln_status fail(kiln_status code, std::string message);

/// The calling thread's last error message (kiln_last_error).
const std::string &lastErrorMessage();

/// Joins names for error messages: "'a', 'b'".
std::string quoteList(const std::vector<std::string> &names);

} // namespace kiln

#endif // KILN_RUNTIME_STATUS_H
