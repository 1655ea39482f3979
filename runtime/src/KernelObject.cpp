//===- KernelObject.cpp - Load the kernel shared object from memory -------===//
//
// The artifact embeds the CPU kernels as an ELF shared object. dlopen needs a
// path, so the bytes go to an anonymous memfd opened as /proc/self/fd/N, or,
// where memfd_create is unavailable, to a temporary file unlinked right away.
// Before that, checkKernelObject reads the bytes as data and refuses an
// object whose loading would run its code.
//
//===----------------------------------------------------------------------===//
#include "KernelObjectCheck.h"
#include "Model.h"
#include "Status.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <mutex>
#include <set>
#include <sys/mman.h>
#include <unistd.h>

using namespace kiln;

namespace {

bool writeAll(int fd, const uint8_t *bytes, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, bytes, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    bytes += n;
    size -= size_t(n);
  }
  return true;
}

// glibc finds an already-loaded object by its path string before it opens the
// file, so a reused path could hand back another model's kernels. Every live
// handle is recorded here to detect that and fall back to a unique path.
std::mutex liveMutex;
std::set<void *> liveHandles;

bool claimHandle(void *handle) {
  std::lock_guard<std::mutex> lock(liveMutex);
  return liveHandles.insert(handle).second;
}

void releaseHandle(void *handle) {
  std::lock_guard<std::mutex> lock(liveMutex);
  liveHandles.erase(handle);
}

/// A path to `fd` that no loaded object answers to. glibc hands back an
/// object already loaded under the same path string without opening the
/// file, and an object marked NODELETE (any that uses C++ unique symbols)
/// stays loaded as /proc/self/fd/N after its fd is closed and N reused. So
/// taken names are skipped by spelling the same file differently.
std::string unusedFdPath(int fd) {
  std::string dir = "/proc/self/fd/";
  for (int attempt = 0; attempt < 64; ++attempt, dir += "./") {
    std::string path = dir + std::to_string(fd);
    void *loaded = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!loaded)
      return path;
    dlclose(loaded);
  }
  return "";
}

std::string dlerrorText() {
  const char *e = dlerror();
  return e ? e : "unknown dlopen error";
}

} // namespace

KernelObject::~KernelObject() {
  if (handle) {
    releaseHandle(handle);
    dlclose(handle);
  }
  if (memfd >= 0)
    ::close(memfd);
}

kiln_status KernelObject::load(const uint8_t *bytes, size_t size) {
  if (kiln_status s = checkKernelObject(bytes, size, code))
    return s;
#ifdef KILN_RUNTIME_NO_KERNEL_LOADING
  // Fuzzing builds: an artifact's kernel object is code, and loading code
  // the fuzzer made up would only test the dynamic loader.
  (void)bytes;
  (void)size;
  return fail(KILN_ERROR_KERNEL_LOAD,
              "kernel loading is disabled in this build (fuzzing)");
#endif
  std::string memfdError;
#ifdef MFD_CLOEXEC
  int mfd = memfd_create("kiln-kernels", MFD_CLOEXEC);
  if (mfd < 0) {
    memfdError = std::string("memfd_create: ") + std::strerror(errno);
  } else if (!writeAll(mfd, bytes, size)) {
    memfdError = std::string("writing memfd: ") + std::strerror(errno);
    ::close(mfd);
  } else {
    std::string path = unusedFdPath(mfd);
    void *h = nullptr;
    if (path.empty()) {
      memfdError = "every spelling of /proc/self/fd/" + std::to_string(mfd) +
                   " names a loaded object";
    } else if (access(path.c_str(), R_OK) != 0) {
      // No /proc (e.g. some containers): use the temporary file below.
      memfdError = path + ": " + std::strerror(errno);
    } else if (!(h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      // A bad object fails the same way from a file; do not retry.
      std::string err = dlerrorText();
      ::close(mfd);
      return fail(KILN_ERROR_KERNEL_LOAD,
                  "cannot load the artifact's kernel object: " + err);
    }
    if (!h) {
      ::close(mfd);
    } else if (!claimHandle(h)) {
      dlclose(h);
      ::close(mfd);
      memfdError = "path " + path + " aliases a loaded object";
    } else {
      handle = h;
      memfd = mfd;
      return KILN_OK;
    }
  }
#endif

  // Fallback: a temporary file with a unique name.
  const char *tmpdir = std::getenv("TMPDIR");
  std::string tmpl =
      std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/kiln-kernels-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = mkstemp(name.data());
  if (fd < 0)
    return fail(KILN_ERROR_KERNEL_LOAD,
                "cannot write the kernel object: mkstemp(" + tmpl + "): " +
                    std::strerror(errno) + " (memfd: " + memfdError + ")");
  bool written = writeAll(fd, bytes, size);
  int writeErrno = errno;
  ::close(fd);
  void *h = written ? dlopen(name.data(), RTLD_NOW | RTLD_LOCAL) : nullptr;
  std::string err = written ? (h ? "" : dlerrorText())
                            : std::string("write: ") + strerror(writeErrno);
  ::unlink(name.data());
  if (!h)
    return fail(KILN_ERROR_KERNEL_LOAD,
                "cannot load the artifact's kernel object: " + err);
  claimHandle(h);
  handle = h;
  return KILN_OK;
}

KernelObject::KernelFn KernelObject::lookup(const char *symbol) const {
  // dlsym also searches the object's dependencies (libc's `abort`): an
  // entry point must be code of the kernel object itself.
  void *address = dlsym(handle, symbol);
  link_map *map = nullptr;
  if (!address || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map ||
      !code.contains(reinterpret_cast<uintptr_t>(address) - map->l_addr))
    return nullptr;
  return reinterpret_cast<KernelFn>(address);
}
