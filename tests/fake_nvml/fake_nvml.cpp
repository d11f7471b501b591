/* A stand-in libnvidia-ml.so.1 for the tool's own tests (no GPU, no driver): two GPUs of an
 * H200 machine. KD_FAKE_NVML picks what GPU 1 shows; GPU 0 stays healthy and idle:
 *   healthy (default) | ecc (3 uncorrected volatile errors) | remap_failed | remap_pending |
 *   slow (PCIe x4 of x16, hw_slowdown + sw_thermal_slowdown, SM clock 600 of 1980 MHz) |
 *   hang (nvmlInit_v2 never returns: sleeps 60 s).
 * KD_FAKE_NVML_COMPUTE_MODE=N (0 default, 2 prohibited, 3 exclusive process), KD_FAKE_NVML_MIG=1 and
 * KD_FAKE_NVML_FABRIC=not_started|in_progress|completed (an NVSwitch system's fabric; else not supported) set both GPUs'.
 * KD_FAKE_NVML_GPU1_PCI moves GPU 1 to that PCI address: on a GPU machine, the real GPU's, so that L2's health
 * test reads the scenario as its own GPU's (a test-only stand-in, never a real machine's result).
 * Built twice: in full, and with KD_FAKE_NVML_MINIMAL (an old driver: most functions missing).
 * The signatures are NVML's C ABI. */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

extern "C" {

typedef int nvmlReturn_t;
struct FakeDevice {
  int index;
};
typedef FakeDevice* nvmlDevice_t;
typedef struct {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;

enum { OK = 0, INVALID_ARGUMENT = 2 };
static FakeDevice g_devices[2] = {{0}, {1}};

static int scenario(const char* name) {
  const char* s = getenv("KD_FAKE_NVML");
  return s && strcmp(s, name) == 0;
}
static int sick(nvmlDevice_t d, const char* name) { return d->index == 1 && scenario(name); }
static void copy(char* out, unsigned len, const char* s) {
  strncpy(out, s, len);
  if (len) out[len - 1] = 0;
}

nvmlReturn_t nvmlInit_v2(void) {
  if (scenario("hang")) sleep(60);
  return OK;
}
nvmlReturn_t nvmlShutdown(void) { return OK; }
const char* nvmlErrorString(nvmlReturn_t r) { return r == OK ? "Success" : "Invalid Argument"; }
nvmlReturn_t nvmlSystemGetDriverVersion(char* v, unsigned len) { copy(v, len, "580.159.04"); return OK; }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* n) { *n = 2; return OK; }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* d) {
  if (i >= 2) return INVALID_ARGUMENT;
  *d = &g_devices[i];
  return OK;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned len) { (void)d; copy(name, len, "NVIDIA H200"); return OK; }
/* GPU 1's PCI address: 00000000:3B:00.0, or KD_FAKE_NVML_GPU1_PCI ("DOMAIN:BUS:DEVICE.0", hex) so that on a GPU
 * machine the sick GPU can sit at the real one's address. */
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* p) {
  memset(p, 0, sizeof *p);
  p->bus = d->index == 0 ? 0x19 : 0x3b;
  const char* at = getenv("KD_FAKE_NVML_GPU1_PCI");
  if (d->index == 1 && at && sscanf(at, "%x:%x:%x", &p->domain, &p->bus, &p->device) != 3) return INVALID_ARGUMENT;
  snprintf(p->busId, sizeof p->busId, "%08X:%02X:%02X.0", p->domain, p->bus, p->device);
  return OK;
}

#ifndef KD_FAKE_NVML_MINIMAL
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) { *v = 13000; return OK; }
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  (void)d;
  m->total = 143771ULL << 20;
  m->used = 512ULL << 20;
  m->free = m->total - m->used;
  return OK;
}
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, int* current, int* pending) { (void)d; *current = *pending = 1; return OK; }
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int error_type, int counter_type, unsigned long long* n) {
  if (counter_type != 0) return INVALID_ARGUMENT;  /* the suite reads volatile counters only */
  *n = sick(d, "ecc") ? (error_type == 1 ? 3 : 12) : 0;
  return OK;
}
nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int* pending) { (void)d; *pending = 0; return OK; }
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned* corr, unsigned* unc, unsigned* pending, unsigned* failed) {
  *corr = 0;
  *unc = sick(d, "remap_failed") ? 1 : 0;
  *pending = static_cast<unsigned>(sick(d, "remap_pending"));
  *failed = static_cast<unsigned>(sick(d, "remap_failed"));
  return OK;
}
static int idle(nvmlDevice_t d) { return !sick(d, "slow"); }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned* v) { *v = idle(d) ? 1 : 5; return OK; }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned* v) { (void)d; *v = 5; return OK; }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned* v) { *v = sick(d, "slow") ? 4 : 16; return OK; }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned* v) { (void)d; *v = 16; return OK; }
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned* mhz) {
  *mhz = type == 2 ? 2619 : sick(d, "slow") ? 600 : 345;
  return OK;
}
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned* mhz) { (void)d; *mhz = type == 2 ? 2619 : 1980; return OK; }
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long* r) {
  *r = sick(d, "slow") ? (0x8 | 0x20) : 0x1;
  return OK;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned* c) { (void)sensor; *c = sick(d, "slow") ? 87 : 32; return OK; }
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned* mw) { (void)d; *mw = 75500; return OK; }
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned* mw) { (void)d; *mw = 700000; return OK; }
nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int* on) { (void)d; *on = 1; return OK; }
static int env_number(const char* name) {
  const char* s = getenv(name);
  return s ? atoi(s) : 0;
}
nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t d, int* mode) { (void)d; *mode = env_number("KD_FAKE_NVML_COMPUTE_MODE"); return OK; }
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned* current, unsigned* pending) {
  (void)d;
  *current = *pending = static_cast<unsigned>(env_number("KD_FAKE_NVML_MIG"));
  return OK;
}
typedef struct {
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned cliqueId;
  unsigned char state; /* nvmlGpuFabricState_t: 0 not supported, 1 not started, 2 in progress, 3 completed */
} nvmlGpuFabricInfo_t;
nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t d, nvmlGpuFabricInfo_t* info) {
  (void)d;
  memset(info, 0, sizeof *info);
  const char* f = getenv("KD_FAKE_NVML_FABRIC");
  info->state = !f ? 0 : !strcmp(f, "not_started") ? 1 : !strcmp(f, "in_progress") ? 2 : !strcmp(f, "completed") ? 3 : 0;
  return OK;
}
#endif
}  // extern "C"
