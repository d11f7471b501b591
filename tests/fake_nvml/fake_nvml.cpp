/* A stand-in libnvidia-ml.so.1 for the tool's own tests (no GPU, no driver): two GPUs of an
 * H200 machine. KD_FAKE_NVML picks what GPU 1 shows; GPU 0 stays healthy and idle:
 *   healthy (default) | ecc (3 uncorrected volatile errors) | remap_failed | remap_pending |
 *   slow (PCIe x4 of x16, hw_slowdown + sw_thermal_slowdown, SM clock 600 of 1980 MHz) |
 *   hang (nvmlInit_v2 never returns: sleeps 60 s).
 * KD_FAKE_NVML_COMPUTE_MODE=N (0 default, 2 prohibited, 3 exclusive process), KD_FAKE_NVML_MIG=1 and
 * KD_FAKE_NVML_FABRIC=not_started|in_progress|completed (an NVSwitch system's fabric; else not supported) set both GPUs'.
 * KD_FAKE_NVML_C2C=N:MBPS attaches both GPUs to the CPU by N active NVLink-C2C links of MBPS MB/s each, and one
 *   inactive link more (a Grace Hopper superchip's GPU; else NVML lists no C2C link).
 * KD_FAKE_NVML_GPU1_PCI moves GPU 1 to that PCI address: on a GPU machine, the real GPU's, so that L2's health
 * test reads the scenario as its own GPU's (a test-only stand-in, never a real machine's result).
 * A shared GPU 0 (docs/shared-gpus.md): it lists its caller's parent (the process that asked: this run's worker, or
 * the supervisor) as a compute process holding 512 MiB, and
 *   KD_FAKE_NVML_OTHERS=N[:MIB]  N other compute processes, MIB each (default 10240), computing on
 *                                KD_FAKE_NVML_OTHERS_SM percent of the SMs (default 90; 0: they only hold memory);
 *   KD_FAKE_NVML_UTILIZATION=P   the GPU's utilization (default 0);
 *   KD_FAKE_NVML_FREE_MIB=M      its free memory (default: what the processes leave);
 *   KD_FAKE_NVML_HIDE_PROCESSES=1  the list shows no process of the caller's (a container that hides them)
 *   (with KD_FAKE_NVML_MIG=1, as on a MIG GPU, NVML cannot tell who computes: the driver's memory is the fallback).
 * KD_FAKE_NVML_THROTTLE=1: GPU 0 throttles, as a card after minutes of load: sw_thermal_slowdown + sw_power_cap, SM
 *   clock 1005 of 1980 MHz, 89 C, 698 W (L6's sustained load names the reasons: tests/e2e/test_load.py).
 * Built twice: in full, and with KD_FAKE_NVML_MINIMAL (an old driver: most functions missing).
 * The signatures are NVML's C ABI. */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <sys/time.h>
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
static int scenario_env(const char* name) {
  const char* v = getenv(name);
  return v && strcmp(v, "1") == 0;
}
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
enum { INSUFFICIENT_SIZE = 7, NOT_FOUND = 6 };
typedef struct { unsigned pid; unsigned long long usedGpuMemory; unsigned gpuInstanceId, computeInstanceId; } nvmlProcessInfo_t;
typedef struct { unsigned pid; unsigned long long timeStamp; unsigned smUtil, memUtil, encUtil, decUtil; } nvmlProcessUtilizationSample_t;
typedef struct { unsigned gpu, memory; } nvmlUtilization_t;

static long env_number(const char* name, long fallback) {
  const char* v = getenv(name);
  return v && *v ? strtol(v, NULL, 10) : fallback;
}
static unsigned others(void) { return (unsigned)env_number("KD_FAKE_NVML_OTHERS", 0); }
static unsigned long long other_mib(void) {
  const char* v = getenv("KD_FAKE_NVML_OTHERS");
  const char* colon = v ? strchr(v, ':') : NULL;
  return colon ? strtoull(colon + 1, NULL, 10) : 10240;
}
static int own_listed(void) { return !scenario_env("KD_FAKE_NVML_HIDE_PROCESSES"); }
/* Ids that are no process of this machine's (past any pid_max): never the caller's. */
static unsigned other_pid(unsigned i) { return 4194304u + 1000u + i; }

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) { *v = 13000; return OK; }
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  m->total = 143771ULL << 20;
  m->used = 512ULL << 20;
  if (d->index == 0) m->used += (unsigned long long)others() * (other_mib() << 20);
  m->free = m->total - m->used;
  if (d->index == 0 && getenv("KD_FAKE_NVML_FREE_MIB")) {
    m->free = (unsigned long long)env_number("KD_FAKE_NVML_FREE_MIB", 0) << 20;
    m->used = m->total - m->free;
  }
  return OK;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned* count, nvmlProcessInfo_t* p) {
  const unsigned n = d->index == 0 ? others() + (unsigned)own_listed() : 0;
  if (*count < n) {
    *count = n;
    return INSUFFICIENT_SIZE;
  }
  unsigned k = 0;
  if (n && own_listed()) p[k++] = nvmlProcessInfo_t{(unsigned)getppid(), 512ULL << 20, 0, 0};
  for (unsigned i = 0; k < n; ++i) p[k++] = nvmlProcessInfo_t{other_pid(i), other_mib() << 20, 0, 0};
  *count = n;
  return OK;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  u->gpu = d->index == 0 ? (unsigned)env_number("KD_FAKE_NVML_UTILIZATION", 0) : 0;
  u->memory = u->gpu / 2;
  return OK;
}
/* One sample per process that computed: the caller's (40 %), and the others' at KD_FAKE_NVML_OTHERS_SM. */
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d, nvmlProcessUtilizationSample_t* s, unsigned* count,
                                             unsigned long long since) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  const unsigned long long now = (unsigned long long)tv.tv_sec * 1000000ULL + (unsigned long long)tv.tv_usec;
  const long sm = env_number("KD_FAKE_NVML_OTHERS_SM", 90);
  const unsigned n = d->index != 0 || now <= since ? 0 : (unsigned)own_listed() + (sm > 0 ? others() : 0);
  if (n == 0) return NOT_FOUND;
  if (!s || *count < n) {
    *count = n;
    return s ? INSUFFICIENT_SIZE : OK;
  }
  unsigned k = 0;
  if (own_listed()) s[k++] = nvmlProcessUtilizationSample_t{(unsigned)getppid(), now, 40, 20, 0, 0};
  for (unsigned i = 0; k < n; ++i) s[k++] = nvmlProcessUtilizationSample_t{other_pid(i), now, (unsigned)sm, 30, 0, 0};
  *count = n;
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
static int throttled(nvmlDevice_t d) { return d->index == 0 && scenario_env("KD_FAKE_NVML_THROTTLE"); }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned* v) { *v = idle(d) ? 1 : 5; return OK; }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned* v) { (void)d; *v = 5; return OK; }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned* v) { *v = sick(d, "slow") ? 4 : 16; return OK; }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned* v) { (void)d; *v = 16; return OK; }
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned* mhz) {
  *mhz = type == 2 ? 2619 : sick(d, "slow") ? 600 : throttled(d) ? 1005 : 345;
  return OK;
}
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned* mhz) { (void)d; *mhz = type == 2 ? 2619 : 1980; return OK; }
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long* r) {
  *r = sick(d, "slow") ? (0x8 | 0x20) : throttled(d) ? (0x4 | 0x20) : 0x1;
  return OK;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned* c) { (void)sensor; *c = sick(d, "slow") ? 87 : throttled(d) ? 89 : 32; return OK; }
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned* mw) { *mw = throttled(d) ? 698000 : 75500; return OK; }
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned* mw) { (void)d; *mw = 700000; return OK; }
nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int* on) { (void)d; *on = 1; return OK; }
nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t d, int* mode) { (void)d; *mode = (int)env_number("KD_FAKE_NVML_COMPUTE_MODE", 0); return OK; }
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned* current, unsigned* pending) {
  (void)d;
  *current = *pending = static_cast<unsigned>(env_number("KD_FAKE_NVML_MIG", 0));
  return OK;
}
/* nvmlFieldValue_t, and the three NVLink-C2C fields (170 link count, 171 a link's status, 172 its MB/s); every other
 * field is not supported. */
typedef struct {
  unsigned fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  union { double dVal; unsigned uiVal; unsigned long ulVal; unsigned long long ullVal; long long sllVal; int siVal; } value;
} nvmlFieldValue_t;
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t* values) {
  (void)d;
  unsigned links = 0, mb_s = 0;
  const char* c2c = getenv("KD_FAKE_NVML_C2C");
  if (c2c && sscanf(c2c, "%u:%u", &links, &mb_s) != 2) links = 0;
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t* v = &values[i];
    v->valueType = 1; /* unsigned int */
    v->nvmlReturn = OK;
    if (v->fieldId == 170) v->value.uiVal = links ? links + 1 : 0;
    else if (v->fieldId == 171 && v->scopeId <= links) v->value.uiVal = v->scopeId < links ? 1 : 0;
    else if (v->fieldId == 172 && v->scopeId <= links) v->value.uiVal = v->scopeId < links ? mb_s : 0;
    else v->nvmlReturn = 3; /* NVML_ERROR_NOT_SUPPORTED */
  }
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
