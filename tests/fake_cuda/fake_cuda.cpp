/* A stand-in libcuda.so.1 for the tool's own tests (no GPU, no driver), first on LD_LIBRARY_PATH: LibTorch's own CUDA
 * runtime loads it, looks every entry point up through cuGetProcAddress (CUDA 12 and 13 do), calls cuDriverGetVersion
 * and cuInit, and reports what cuInit answers in its own words ("Error 802: system not yet initialized"). What cuInit
 * answers is the test's choice, or what the real driver answers when the machine stops it (docs/signatures.md):
 *   KD_FAKE_CUDA_INIT=N        cuInit returns CUresult N (default 100, CUDA_ERROR_NO_DEVICE; 0 would go on to entry
 *                              points this stand-in lacks, which the runtime reports as 36)
 *   KD_FAKE_CUDA_VERSION=N     cuDriverGetVersion's answer (default 13000); older than the runtime: "driver too old" (35)
 *   KD_FAKE_CUDA_NODE=PATH     first opens PATH read-write as the driver opens /dev/nvidiactl: when this user may not,
 *                              CUDA_ERROR_NO_DEVICE (100)
 *   KD_FAKE_CUDA_FDS=N         first holds N more descriptors, as the driver does for its nodes and context: past the
 *                              open-files limit, CUDA_ERROR_DEVICE_UNAVAILABLE (46, "busy or unavailable")
 *   KD_FAKE_CUDA_RESERVE_GIB=N first reserves N GiB of address space, as the driver does for unified memory: under an
 *                              address-space limit, CUDA_ERROR_OUT_OF_MEMORY (2)
 * Built twice (tests/fake_cuda/CMakeLists.txt): default/ and compat/ (a folder named compat, as NVIDIA's
 * forward-compatibility package installs its libcuda). The signatures are the driver API's C ABI. */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

extern "C" {

typedef int CUresult;
enum { CUDA_SUCCESS = 0, CUDA_ERROR_OUT_OF_MEMORY = 2, CUDA_ERROR_DEVICE_UNAVAILABLE = 46, CUDA_ERROR_NO_DEVICE = 100,
       CUDA_ERROR_NOT_FOUND = 500 };

static long number(const char* name, long fallback) {
  const char* s = getenv(name);
  return s && *s ? strtol(s, nullptr, 10) : fallback;
}

// What the driver needs before it can say anything else; 0 when it has it.
static CUresult machine_allows(void) {
  if (const char* node = getenv("KD_FAKE_CUDA_NODE")) {
    const int fd = open(node, O_RDWR | O_CLOEXEC);
    if (fd < 0) return CUDA_ERROR_NO_DEVICE;
    close(fd);
  }
  const long fds = number("KD_FAKE_CUDA_FDS", 0);
  int held[1024];
  long n = 0;
  CUresult r = CUDA_SUCCESS;
  for (; n < fds && n < 1024; ++n)
    if ((held[n] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
      r = CUDA_ERROR_DEVICE_UNAVAILABLE;
      break;
    }
  while (n > 0) close(held[--n]);
  if (r != CUDA_SUCCESS) return r;
  if (const long gib = number("KD_FAKE_CUDA_RESERVE_GIB", 0); gib > 0) {
    const size_t bytes = static_cast<size_t>(gib) << 30;
    void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    munmap(p, bytes);
  }
  return CUDA_SUCCESS;
}

CUresult cuInit(unsigned flags) {
  (void)flags;
  const CUresult machine = machine_allows();
  return machine != CUDA_SUCCESS ? machine : static_cast<CUresult>(number("KD_FAKE_CUDA_INIT", CUDA_ERROR_NO_DEVICE));
}

CUresult cuDriverGetVersion(int* version) {
  *version = static_cast<int>(number("KD_FAKE_CUDA_VERSION", 13000));
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char** name) {
  (void)error;
  *name = "CUDA_ERROR_STAND_IN";
  return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult error, const char** text) {
  (void)error;
  *text = "an error of the stand-in libcuda";
  return CUDA_SUCCESS;
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, unsigned long long flags, int* status);

// Every entry point the runtime asks for that this stand-in has; the rest are "not found", as an old driver says.
static void* entry(const char* symbol) {
  if (!strcmp(symbol, "cuInit")) return reinterpret_cast<void*>(cuInit);
  if (!strcmp(symbol, "cuDriverGetVersion")) return reinterpret_cast<void*>(cuDriverGetVersion);
  if (!strcmp(symbol, "cuGetErrorName")) return reinterpret_cast<void*>(cuGetErrorName);
  if (!strcmp(symbol, "cuGetErrorString")) return reinterpret_cast<void*>(cuGetErrorString);
  if (!strcmp(symbol, "cuGetProcAddress")) return reinterpret_cast<void*>(cuGetProcAddress_v2);
  return nullptr;
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, unsigned long long flags, int* status) {
  (void)version;
  (void)flags;
  *pfn = entry(symbol);
  if (status) *status = *pfn ? 0 : 1;  // CU_GET_PROC_ADDRESS_SUCCESS, _SYMBOL_NOT_FOUND
  return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, unsigned long long flags) {
  return cuGetProcAddress_v2(symbol, pfn, version, flags, nullptr);
}

}  // extern "C"
