//===- MemoryFile.h - fuzzer bytes as a file path ---------------*- C++ -*-===//
//
// The readers under test take paths, as the tools call them; a memfd gives
// the fuzzer's bytes one without touching the disk.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TEST_FUZZ_MEMORYFILE_H
#define KILN_TEST_FUZZ_MEMORYFILE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

class MemoryFile {
public:
  MemoryFile(const uint8_t *data, size_t size) {
    fd_ = memfd_create("kiln-fuzz-input", MFD_CLOEXEC);
    if (fd_ >= 0 && size > 0 && write(fd_, data, size) != ssize_t(size)) {
      close(fd_);
      fd_ = -1;
    }
  }
  MemoryFile(const MemoryFile &) = delete;
  MemoryFile &operator=(const MemoryFile &) = delete;
  ~MemoryFile() {
    if (fd_ >= 0)
      close(fd_);
  }
  /// False when the file could not be made (the input is then skipped).
  bool ok() const { return fd_ >= 0; }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

private:
  int fd_ = -1;
};

#endif
