//===- Status.cpp - the runtime's errors ----------------------------------===//
#include "Status.h"

using namespace kiln;

static thread_local std::string lastError;

kiln_status kiln::fail(kiln_status code, std::string message) {
  try {
    lastError = std::move(message);
  } catch (...) {
    // Keep the status even if the message cannot be stored.
  }
  return code;
}

const std::string &kiln::lastErrorMessage() { return lastError; }

std::string kiln::quoteList(const std::vector<std::string> &names) {
  if (names.empty())
    return "(none)";
  std::string s;
  for (const std::string &n : names)
    s += (s.empty() ? "'" : ", '") + n + "'";
  return s;
}
