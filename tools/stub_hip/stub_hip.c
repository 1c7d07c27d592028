/* A stand-in libamdhip64: one fake AMD GPU for the real libMIOpen's host side (test tooling).
 *
 * Built by tools/stub_hip/build.py with the machine's C compiler into a cache directory, once per
 * MIOpen version (soname and symbol versions taken from that libMIOpen's imports); never shipped.
 * The device is chosen by HIPDNN_STUBGPU_ARCH (gfx90a, gfx942, gfx908, gfx1100; default gfx942) and its
 * properties fill the real hipDeviceProp_tR0600 (the sysroot's hip_runtime_api.h).
 * Device memory is host memory (fresh allocations 0xFF-filled: NaN), copies and memsets are real.
 * Streams and events are recorded tokens. Module loads and kernel launches are recorded as JSON
 * lines in the file named by HIPDNN_STUBGPU_LOG; launches run nowhere unless a hook library is
 * named by HIPDNN_STUBGPU_HOOK (contract: stubgpu_hook.h). No number is ever computed here.
 */
#define _GNU_SOURCE
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stubgpu_hook.h"

#define EXPORT __attribute__((visibility("default")))
#ifndef STUBGPU_HIP_VERSION
#define STUBGPU_HIP_VERSION 70224000 /* hipRuntimeGetVersion: major*1e7 + minor*1e5 + patch */
#endif

/* ------------------------------------------------------------------------------ the device */
typedef struct {
  const char *arch, *gcn_arch_name, *name;
  int major, minor, cus, warp, l2, clock_khz, mem_clock_khz, bus_width, max_threads_per_cu;
  size_t total_mem;
} arch_t;

static const arch_t ARCHS[] = {
  {"gfx90a", "gfx90a:sramecc+:xnack-", "AMD Instinct MI210 (hipdnn stub GPU)", 9, 0, 104, 64,
   8 << 20, 1700000, 1600000, 4096, 2048, (size_t)64 << 30},
  {"gfx942", "gfx942:sramecc+:xnack-", "AMD Instinct MI300X (hipdnn stub GPU)", 9, 4, 304, 64,
   4 << 20, 2100000, 2600000, 8192, 2048, (size_t)192 << 30},
  {"gfx908", "gfx908:sramecc+:xnack-", "AMD Instinct MI100 (hipdnn stub GPU)", 9, 0, 120, 64,
   8 << 20, 1502000, 1200000, 4096, 2560, (size_t)32 << 30},
  {"gfx1100", "gfx1100", "AMD Radeon RX 7900 XTX (hipdnn stub GPU)", 11, 0, 48, 32,
   6 << 20, 2500000, 1250000, 384, 2048, (size_t)24 << 30},
};

static pthread_mutex_t g_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static const arch_t *g_arch;
static int g_log_fd = -2; /* -2: not opened yet, -1: no log */

static const arch_t *arch(void) {
  if (!g_arch) {
    const char *want = getenv("HIPDNN_STUBGPU_ARCH");
    g_arch = &ARCHS[1];
    for (size_t i = 0; want && i < sizeof ARCHS / sizeof ARCHS[0]; ++i)
      if (strcmp(want, ARCHS[i].arch) == 0) g_arch = &ARCHS[i];
  }
  return g_arch;
}

/* ---------------------------------------------------------------------------------- the log */
static void log_line(const char *fmt, ...) {
  pthread_mutex_lock(&g_lock);
  if (g_log_fd == -2) {
    const char *path = getenv("HIPDNN_STUBGPU_LOG");
    g_log_fd = path && *path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
  }
  if (g_log_fd >= 0) {
    char buf[8192];
    int n = snprintf(buf, sizeof buf, "{\"pid\":%d,\"arch\":\"%s\",", (int)getpid(), arch()->arch);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - (size_t)n - 2, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 3) n = (int)sizeof buf - 3;
    buf[n++] = '}';
    buf[n++] = '\n';
    ssize_t w = write(g_log_fd, buf, (size_t)n);
    (void)w;
  }
  pthread_mutex_unlock(&g_lock);
}

static hipError_t g_last = hipSuccess;

static hipError_t failed(const char *function, hipError_t status, const char *why) {
  g_last = status;
  log_line("\"event\":\"error\",\"function\":\"%s\",\"status\":%d,\"why\":\"%s\"", function, (int)status, why);
  return status;
}

/* -------------------------------------------------------------------------- fault injection */
/* hipdnn_stubgpu_fail(function, nth, status): the nth call of `function` from now on returns
 * `status` (once). hipdnn_stubgpu_calls(function): how many calls of it were made (counted for
 * the functions that can be failed: hipSetDevice, hipGetDevicePropertiesR0600, hipMalloc,
 * hipHostMalloc, hipMemcpy*, hipMemset*, hipStreamCreateWithFlags, hipStreamSynchronize,
 * hipModuleLoad*, hipModuleGetFunction and the launches). Test tooling: tests/stubgpu. */
#define MAX_FAULTS 64
typedef struct { char name[64]; long nth; int status; } fault_t;
typedef struct { char name[64]; unsigned long calls; } counter_t;
static fault_t g_faults[MAX_FAULTS];
static int g_nfaults;
static counter_t g_counters[64];
static int g_ncounters;

EXPORT int hipdnn_stubgpu_fail(const char *function, long nth, int status) {
  if (!function || nth < 1 || status == 0) return 1;
  pthread_mutex_lock(&g_lock);
  int rc = 1;
  if (g_nfaults < MAX_FAULTS) {
    snprintf(g_faults[g_nfaults].name, sizeof g_faults[0].name, "%s", function);
    g_faults[g_nfaults].nth = nth;
    g_faults[g_nfaults].status = status;
    ++g_nfaults;
    rc = 0;
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

EXPORT void hipdnn_stubgpu_clear_faults(void) {
  pthread_mutex_lock(&g_lock);
  g_nfaults = 0;
  pthread_mutex_unlock(&g_lock);
}

EXPORT unsigned long hipdnn_stubgpu_calls(const char *function) {
  unsigned long n = 0;
  pthread_mutex_lock(&g_lock);
  for (int i = 0; function && i < g_ncounters; ++i)
    if (strcmp(g_counters[i].name, function) == 0) n = g_counters[i].calls;
  pthread_mutex_unlock(&g_lock);
  return n;
}

/* Count a call of `function`; the status an armed fault makes it return (0: none). */
static int injected(const char *function) {
  int status = 0;
  pthread_mutex_lock(&g_lock);
  int i = 0;
  while (i < g_ncounters && strcmp(g_counters[i].name, function) != 0) ++i;
  if (i == g_ncounters && g_ncounters < (int)(sizeof g_counters / sizeof g_counters[0])) {
    snprintf(g_counters[i].name, sizeof g_counters[0].name, "%s", function);
    g_counters[i].calls = 0;
    ++g_ncounters;
  }
  if (i < g_ncounters) ++g_counters[i].calls;
  for (int k = 0; k < g_nfaults; ++k) {
    if (strcmp(g_faults[k].name, function) != 0) continue;
    if (--g_faults[k].nth == 0 && status == 0) status = g_faults[k].status;
  }
  int kept = 0;
  for (int k = 0; k < g_nfaults; ++k)
    if (g_faults[k].nth > 0) g_faults[kept++] = g_faults[k];
  g_nfaults = kept;
  pthread_mutex_unlock(&g_lock);
  return status;
}

#define INJECT(function)                                                                        \
  do {                                                                                          \
    int injected_ = injected(function);                                                         \
    if (injected_) return failed(function, (hipError_t)injected_, "injected");                  \
  } while (0)

/* ------------------------------------------------------------------------------ allocations */
typedef struct { char *base; size_t size; } alloc_t;
static alloc_t *g_allocs;
static size_t g_nallocs, g_cap, g_in_use;

EXPORT int hipdnn_stubgpu_lookup(const void *p, void **base, size_t *size) {
  int rc = 1;
  pthread_mutex_lock(&g_lock);
  for (size_t i = 0; i < g_nallocs; ++i) {
    const char *b = g_allocs[i].base;
    if ((const char *)p >= b && (const char *)p < b + g_allocs[i].size) {
      if (base) *base = g_allocs[i].base;
      if (size) *size = g_allocs[i].size;
      rc = 0;
      break;
    }
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

/* Bytes [p, p+n) that start inside an allocation must end inside it (host memory passes). */
static int overruns(const void *p, size_t n) {
  void *b;
  size_t s;
  if (hipdnn_stubgpu_lookup(p, &b, &s) != 0) return 0;
  return (size_t)((const char *)p - (const char *)b) + n > s;
}

static hipError_t dev_alloc(const char *api, void **out, size_t n) {
  INJECT(api);
  if (!out) return failed(api, hipErrorInvalidValue, "NULL result pointer");
  size_t rounded = (n ? n : 1) + 255;
  rounded -= rounded % 256;
  if (g_in_use + rounded > arch()->total_mem) return failed(api, hipErrorOutOfMemory, "over the device's memory");
  void *p = aligned_alloc(256, rounded);
  if (!p) return failed(api, hipErrorOutOfMemory, "host allocation failed");
  memset(p, 0xFF, rounded); /* NaN in fp32/fp16/bf16: an output nothing wrote stays visible */
  pthread_mutex_lock(&g_lock);
  if (g_nallocs == g_cap) {
    g_cap = g_cap ? 2 * g_cap : 256;
    g_allocs = realloc(g_allocs, g_cap * sizeof *g_allocs);
  }
  g_allocs[g_nallocs++] = (alloc_t){p, n};
  g_in_use += rounded;
  pthread_mutex_unlock(&g_lock);
  *out = p;
  log_line("\"event\":\"malloc\",\"api\":\"%s\",\"size\":%zu,\"ptr\":%lu", api, n, (unsigned long)(uintptr_t)p);
  return hipSuccess;
}

static hipError_t dev_free(const char *api, void *p) {
  if (!p) return hipSuccess;
  pthread_mutex_lock(&g_lock);
  for (size_t i = 0; i < g_nallocs; ++i) {
    if (g_allocs[i].base == p) {
      size_t rounded = (g_allocs[i].size ? g_allocs[i].size : 1) + 255;
      g_in_use -= rounded - rounded % 256;
      g_allocs[i] = g_allocs[--g_nallocs];
      pthread_mutex_unlock(&g_lock);
      log_line("\"event\":\"free\",\"api\":\"%s\",\"ptr\":%lu", api, (unsigned long)(uintptr_t)p);
      free(p);
      return hipSuccess;
    }
  }
  pthread_mutex_unlock(&g_lock);
  return failed(api, hipErrorInvalidValue, "not a live allocation");
}

/* ------------------------------------------------------------------------- runtime basics */
EXPORT hipError_t hipInit(unsigned int flags) { (void)flags; log_line("\"event\":\"init\""); return hipSuccess; }
EXPORT hipError_t hipGetDeviceCount(int *n) { if (!n) return hipErrorInvalidValue; *n = 1; return hipSuccess; }
EXPORT hipError_t hipGetDevice(int *d) { if (!d) return hipErrorInvalidValue; *d = 0; return hipSuccess; }
EXPORT hipError_t hipSetDevice(int d) { INJECT("hipSetDevice"); return d == 0 ? hipSuccess : failed("hipSetDevice", hipErrorInvalidDevice, "one device: 0"); }
EXPORT hipError_t hipDeviceSynchronize(void) { return hipSuccess; }
EXPORT hipError_t hipGetLastError(void) { hipError_t e = g_last; g_last = hipSuccess; return e; }
EXPORT hipError_t hipPeekAtLastError(void) { return g_last; }
EXPORT hipError_t hipDriverGetVersion(int *v) { if (!v) return hipErrorInvalidValue; *v = STUBGPU_HIP_VERSION; return hipSuccess; }
EXPORT hipError_t hipRuntimeGetVersion(int *v) { if (!v) return hipErrorInvalidValue; *v = STUBGPU_HIP_VERSION; return hipSuccess; }

EXPORT const char *hipGetErrorName(hipError_t e) {
  switch (e) {
  case hipSuccess: return "hipSuccess";
  case hipErrorInvalidValue: return "hipErrorInvalidValue";
  case hipErrorOutOfMemory: return "hipErrorOutOfMemory";
  case hipErrorInvalidDevice: return "hipErrorInvalidDevice";
  case hipErrorInvalidImage: return "hipErrorInvalidImage";
  case hipErrorInvalidHandle: return "hipErrorInvalidHandle";
  case hipErrorNotFound: return "hipErrorNotFound";
  case hipErrorFileNotFound: return "hipErrorFileNotFound";
  case hipErrorLaunchFailure: return "hipErrorLaunchFailure";
  case hipErrorNotSupported: return "hipErrorNotSupported";
  default: return "hipErrorUnknown";
  }
}
EXPORT const char *hipGetErrorString(hipError_t e) {
  return e == hipSuccess ? "no error" : "hipdnn stub GPU: see HIPDNN_STUBGPU_LOG for the failing call";
}

static void fill_props(hipDeviceProp_tR0600 *p) {
  const arch_t *a = arch();
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "%s", a->name);
  snprintf(p->gcnArchName, sizeof p->gcnArchName, "%s", a->gcn_arch_name);
  p->totalGlobalMem = a->total_mem;
  p->sharedMemPerBlock = 65536;
  p->regsPerBlock = 65536;
  p->warpSize = a->warp;
  p->memPitch = (size_t)1 << 31;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = p->maxThreadsDim[1] = p->maxThreadsDim[2] = 1024;
  p->maxGridSize[0] = p->maxGridSize[1] = p->maxGridSize[2] = 0x7FFFFFFF;
  p->clockRate = a->clock_khz;
  p->memoryClockRate = a->mem_clock_khz;
  p->memoryBusWidth = a->bus_width;
  p->totalConstMem = 65536;
  p->major = a->major;
  p->minor = a->minor;
  p->multiProcessorCount = a->cus;
  p->l2CacheSize = a->l2;
  p->maxThreadsPerMultiProcessor = a->max_threads_per_cu;
  p->maxSharedMemoryPerMultiProcessor = 65536;
  p->sharedMemPerMultiprocessor = 65536;
  p->sharedMemPerBlockOptin = 65536;
  p->regsPerMultiprocessor = 65536;
  p->textureAlignment = 256;
  p->pciBusID = 3;
  p->concurrentKernels = 1;
  p->managedMemory = 1;
  p->cooperativeLaunch = 1;
  p->cooperativeMultiDeviceLaunch = 1;
  p->canMapHostMemory = 1;
  p->unifiedAddressing = 1;
  p->asicRevision = 1;
  p->clusterLaunch = 0;
}

EXPORT hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600 *p, int d) {
  INJECT("hipGetDevicePropertiesR0600");
  if (!p) return failed("hipGetDevicePropertiesR0600", hipErrorInvalidValue, "NULL properties");
  if (d != 0) return failed("hipGetDevicePropertiesR0600", hipErrorInvalidDevice, "one device: 0");
  fill_props(p);
  return hipSuccess;
}

EXPORT hipError_t hipDeviceGetName(char *name, int len, int d) {
  if (!name || len <= 0 || d != 0) return failed("hipDeviceGetName", hipErrorInvalidValue, "bad arguments");
  snprintf(name, (size_t)len, "%s", arch()->name);
  return hipSuccess;
}

EXPORT hipError_t hipDeviceTotalMem(size_t *bytes, int d) {
  if (!bytes || d != 0) return failed("hipDeviceTotalMem", hipErrorInvalidValue, "bad arguments");
  *bytes = arch()->total_mem;
  return hipSuccess;
}

EXPORT hipError_t hipMemGetInfo(size_t *free_bytes, size_t *total) {
  if (!free_bytes || !total) return failed("hipMemGetInfo", hipErrorInvalidValue, "NULL result");
  *total = arch()->total_mem;
  *free_bytes = *total - g_in_use;
  return hipSuccess;
}

EXPORT hipError_t hipDeviceGetAttribute(int *v, hipDeviceAttribute_t attr, int d) {
  if (!v || d != 0) return failed("hipDeviceGetAttribute", hipErrorInvalidValue, "bad arguments");
  hipDeviceProp_tR0600 p;
  fill_props(&p);
  switch (attr) {
  case hipDeviceAttributeMultiprocessorCount: *v = p.multiProcessorCount; break;
  case hipDeviceAttributeMaxThreadsPerBlock: *v = p.maxThreadsPerBlock; break;
  case hipDeviceAttributeMaxBlockDimX: case hipDeviceAttributeMaxBlockDimY:
  case hipDeviceAttributeMaxBlockDimZ: *v = 1024; break;
  case hipDeviceAttributeMaxGridDimX: case hipDeviceAttributeMaxGridDimY:
  case hipDeviceAttributeMaxGridDimZ: *v = 0x7FFFFFFF; break;
  case hipDeviceAttributeWarpSize: *v = p.warpSize; break;
  case hipDeviceAttributeMaxSharedMemoryPerBlock: *v = (int)p.sharedMemPerBlock; break;
  case hipDeviceAttributeMaxSharedMemoryPerMultiprocessor: *v = (int)p.maxSharedMemoryPerMultiProcessor; break;
  case hipDeviceAttributeMaxRegistersPerBlock: *v = p.regsPerBlock; break;
  case hipDeviceAttributeComputeCapabilityMajor: *v = p.major; break;
  case hipDeviceAttributeComputeCapabilityMinor: *v = p.minor; break;
  case hipDeviceAttributeClockRate: *v = p.clockRate; break;
  case hipDeviceAttributeMemoryClockRate: *v = p.memoryClockRate; break;
  case hipDeviceAttributeMemoryBusWidth: *v = p.memoryBusWidth; break;
  case hipDeviceAttributeL2CacheSize: *v = p.l2CacheSize; break;
  case hipDeviceAttributeMaxThreadsPerMultiProcessor: *v = p.maxThreadsPerMultiProcessor; break;
  case hipDeviceAttributeTotalConstantMemory: *v = (int)p.totalConstMem; break;
  case hipDeviceAttributePciBusId: *v = p.pciBusID; break;
  case hipDeviceAttributeConcurrentKernels: *v = 1; break;
  case hipDeviceAttributeCooperativeLaunch: *v = 1; break;
  case hipDeviceAttributeAsicRevision: *v = p.asicRevision; break;
  default:
    *v = 0;
    log_line("\"event\":\"attribute\",\"attribute\":%d,\"value\":0", (int)attr);
    break;
  }
  return hipSuccess;
}

/* --------------------------------------------------------------------------------- memory */
EXPORT hipError_t hipMalloc(void **p, size_t n) { return dev_alloc("hipMalloc", p, n); }
EXPORT hipError_t hipHostMalloc(void **p, size_t n, unsigned int flags) { (void)flags; return dev_alloc("hipHostMalloc", p, n); }
EXPORT hipError_t hipFree(void *p) { return dev_free("hipFree", p); }
EXPORT hipError_t hipHostFree(void *p) { return dev_free("hipHostFree", p); }

EXPORT hipError_t hipMemPtrGetInfo(void *p, size_t *size) {
  void *b;
  if (!size) return failed("hipMemPtrGetInfo", hipErrorInvalidValue, "NULL size");
  return hipdnn_stubgpu_lookup(p, &b, size) == 0 ? hipSuccess
                                                  : failed("hipMemPtrGetInfo", hipErrorInvalidValue, "not a live allocation");
}

EXPORT hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attr, const void *p) {
  void *b;
  size_t s;
  if (!attr) return failed("hipPointerGetAttributes", hipErrorInvalidValue, "NULL attributes");
  memset(attr, 0, sizeof *attr);
  if (hipdnn_stubgpu_lookup(p, &b, &s) != 0) return hipErrorInvalidValue; /* host memory: as real HIP says */
  attr->type = hipMemoryTypeDevice;
  attr->devicePointer = (void *)p;
  attr->hostPointer = NULL;
  attr->device = 0;
  return hipSuccess;
}

static const char *kind_name(hipMemcpyKind k) {
  switch (k) {
  case hipMemcpyHostToHost: return "HostToHost";
  case hipMemcpyHostToDevice: return "HostToDevice";
  case hipMemcpyDeviceToHost: return "DeviceToHost";
  case hipMemcpyDeviceToDevice: return "DeviceToDevice";
  default: return "Default";
  }
}

static hipError_t copy(const char *api, void *dst, const void *src, size_t n, hipMemcpyKind k, hipStream_t s) {
  INJECT(api);
  if (n && (!dst || !src)) return failed(api, hipErrorInvalidValue, "NULL pointer");
  if (overruns(dst, n) || overruns(src, n)) return failed(api, hipErrorInvalidValue, "copy runs past an allocation");
  memmove(dst, src, n);
  log_line("\"event\":\"memcpy\",\"api\":\"%s\",\"kind\":\"%s\",\"bytes\":%zu,\"stream\":%lu", api, kind_name(k), n,
           (unsigned long)(uintptr_t)s);
  return hipSuccess;
}

EXPORT hipError_t hipMemcpy(void *d, const void *s, size_t n, hipMemcpyKind k) { return copy("hipMemcpy", d, s, n, k, NULL); }
EXPORT hipError_t hipMemcpyAsync(void *d, const void *s, size_t n, hipMemcpyKind k, hipStream_t st) {
  return copy("hipMemcpyAsync", d, s, n, k, st);
}
EXPORT hipError_t hipMemcpyWithStream(void *d, const void *s, size_t n, hipMemcpyKind k, hipStream_t st) {
  return copy("hipMemcpyWithStream", d, s, n, k, st);
}

static hipError_t fill(const char *api, void *d, int v, size_t n, hipStream_t s) {
  INJECT(api);
  if (n && !d) return failed(api, hipErrorInvalidValue, "NULL pointer");
  if (overruns(d, n)) return failed(api, hipErrorInvalidValue, "memset runs past an allocation");
  memset(d, v, n);
  log_line("\"event\":\"memset\",\"api\":\"%s\",\"bytes\":%zu,\"value\":%d,\"stream\":%lu", api, n, v,
           (unsigned long)(uintptr_t)s);
  return hipSuccess;
}
EXPORT hipError_t hipMemset(void *d, int v, size_t n) { return fill("hipMemset", d, v, n, NULL); }
EXPORT hipError_t hipMemsetAsync(void *d, int v, size_t n, hipStream_t s) { return fill("hipMemsetAsync", d, v, n, s); }

/* ------------------------------------------------------------------------ streams, events */
#define STREAM_MAGIC 0x57AEA3u
#define EVENT_MAGIC 0xE7E27u
typedef struct { unsigned magic; unsigned id; } stream_t;
typedef struct { unsigned magic; unsigned id; double ms; int recorded; } event_t;
static unsigned g_streams, g_events;

static int bad_stream(hipStream_t s) { return s && ((stream_t *)s)->magic != STREAM_MAGIC; }

EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned int flags) {
  INJECT("hipStreamCreateWithFlags");
  if (!s) return failed("hipStreamCreateWithFlags", hipErrorInvalidValue, "NULL result");
  stream_t *st = calloc(1, sizeof *st);
  st->magic = STREAM_MAGIC;
  st->id = __atomic_add_fetch(&g_streams, 1, __ATOMIC_RELAXED);
  *s = (hipStream_t)st;
  log_line("\"event\":\"stream_create\",\"stream\":%lu,\"id\":%u,\"flags\":%u", (unsigned long)(uintptr_t)st, st->id, flags);
  return hipSuccess;
}
EXPORT hipError_t hipStreamCreate(hipStream_t *s) { return hipStreamCreateWithFlags(s, 0); }
EXPORT hipError_t hipStreamDestroy(hipStream_t s) {
  if (!s || bad_stream(s)) return failed("hipStreamDestroy", hipErrorInvalidHandle, "not a stream");
  ((stream_t *)s)->magic = 0;
  log_line("\"event\":\"stream_destroy\",\"stream\":%lu", (unsigned long)(uintptr_t)s);
  free(s);
  return hipSuccess;
}
EXPORT hipError_t hipStreamSynchronize(hipStream_t s) {
  INJECT("hipStreamSynchronize");
  return bad_stream(s) ? failed("hipStreamSynchronize", hipErrorInvalidHandle, "not a stream") : hipSuccess;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static int bad_event(hipEvent_t e) { return !e || ((event_t *)e)->magic != EVENT_MAGIC; }

EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned flags) {
  (void)flags;
  if (!e) return failed("hipEventCreate", hipErrorInvalidValue, "NULL result");
  event_t *ev = calloc(1, sizeof *ev);
  ev->magic = EVENT_MAGIC;
  ev->id = __atomic_add_fetch(&g_events, 1, __ATOMIC_RELAXED);
  *e = (hipEvent_t)ev;
  return hipSuccess;
}
EXPORT hipError_t hipEventCreate(hipEvent_t *e) { return hipEventCreateWithFlags(e, 0); }
EXPORT hipError_t hipEventDestroy(hipEvent_t e) {
  if (bad_event(e)) return failed("hipEventDestroy", hipErrorInvalidHandle, "not an event");
  ((event_t *)e)->magic = 0;
  free(e);
  return hipSuccess;
}
EXPORT hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) {
  if (bad_event(e) || bad_stream(s)) return failed("hipEventRecord", hipErrorInvalidHandle, "not an event/stream");
  ((event_t *)e)->ms = now_ms();
  ((event_t *)e)->recorded = 1;
  return hipSuccess;
}
EXPORT hipError_t hipEventSynchronize(hipEvent_t e) {
  return bad_event(e) ? failed("hipEventSynchronize", hipErrorInvalidHandle, "not an event") : hipSuccess;
}
EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b) {
  if (!ms || bad_event(a) || bad_event(b)) return failed("hipEventElapsedTime", hipErrorInvalidHandle, "not an event");
  if (!((event_t *)a)->recorded || !((event_t *)b)->recorded)
    return failed("hipEventElapsedTime", hipErrorNotReady, "event not recorded");
  *ms = (float)(((event_t *)b)->ms - ((event_t *)a)->ms);
  return hipSuccess;
}
EXPORT hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned int flags) {
  (void)flags;
  if (bad_stream(s) || bad_event(e)) return failed("hipStreamWaitEvent", hipErrorInvalidHandle, "not an event/stream");
  return hipSuccess;
}

/* -------------------------------------------------------------------------------- modules */
typedef struct { unsigned char *image; size_t size; unsigned id; uint64_t hash; } module_t;
typedef struct { module_t *module; char name[512]; } function_t;
static unsigned g_modules;

/* An ELF64 image's size: the end of its section header table or of its last section. */
static size_t elf_size(const unsigned char *b) {
  if (memcmp(b, "\x7f" "ELF", 4) != 0 || b[4] != 2) return 0;
  uint64_t shoff;
  uint16_t shentsize, shnum;
  memcpy(&shoff, b + 0x28, 8);
  memcpy(&shentsize, b + 0x3A, 2);
  memcpy(&shnum, b + 0x3C, 2);
  size_t end = shoff + (size_t)shentsize * shnum;
  for (uint16_t i = 0; i < shnum; ++i) {
    uint32_t type;
    uint64_t off, size;
    const unsigned char *sh = b + shoff + (size_t)i * shentsize;
    memcpy(&type, sh + 4, 4);
    memcpy(&off, sh + 0x18, 8);
    memcpy(&size, sh + 0x20, 8);
    if (type != 8 /* SHT_NOBITS */ && off + size > end) end = off + size;
  }
  return end;
}

/* 1 when the ELF's symbol tables hold `name` (an AMDGPU kernel symbol). */
static int elf_has_symbol(const module_t *m, const char *name) {
  const unsigned char *b = m->image;
  uint64_t shoff;
  uint16_t shentsize, shnum;
  memcpy(&shoff, b + 0x28, 8);
  memcpy(&shentsize, b + 0x3A, 2);
  memcpy(&shnum, b + 0x3C, 2);
  for (uint16_t i = 0; i < shnum; ++i) {
    const unsigned char *sh = b + shoff + (size_t)i * shentsize;
    uint32_t type, link;
    uint64_t off, size, entsize;
    memcpy(&type, sh + 4, 4);
    if (type != 2 && type != 11) continue; /* SHT_SYMTAB, SHT_DYNSYM */
    memcpy(&off, sh + 0x18, 8);
    memcpy(&size, sh + 0x20, 8);
    memcpy(&link, sh + 0x28, 4);
    memcpy(&entsize, sh + 0x38, 8);
    const unsigned char *strsh = b + shoff + (size_t)link * shentsize;
    uint64_t stroff, strsize;
    memcpy(&stroff, strsh + 0x18, 8);
    memcpy(&strsize, strsh + 0x20, 8);
    for (uint64_t s = 0; entsize && s + entsize <= size; s += entsize) {
      uint32_t nameoff;
      memcpy(&nameoff, b + off + s, 4);
      if (nameoff < strsize && strcmp((const char *)b + stroff + nameoff, name) == 0) return 1;
    }
  }
  return 0;
}

static uint64_t fnv1a(const unsigned char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static hipError_t load_image(const char *api, hipModule_t *out, const unsigned char *image, size_t n, const char *path) {
  module_t *m = calloc(1, sizeof *m);
  m->image = malloc(n);
  memcpy(m->image, image, n);
  m->size = n;
  m->id = __atomic_add_fetch(&g_modules, 1, __ATOMIC_RELAXED);
  m->hash = fnv1a(image, n);
  *out = (hipModule_t)m;
  log_line("\"event\":\"module_load\",\"api\":\"%s\",\"module\":%u,\"bytes\":%zu,\"fnv1a\":\"%016lx\",\"path\":\"%s\"",
           api, m->id, n, (unsigned long)m->hash, path ? path : "");
  return hipSuccess;
}

/* A clang offload bundle ("__CLANG_OFFLOAD_BUNDLE__", what MIOpen 3.4's clang++-21 -x hip
   writes): the entry for this device's architecture ("hipv4-amdgcn-amd-amdhsa--gfx90a", target
   features ignored), else NULL. `avail` bounds the reads (SIZE_MAX when unknown: LoadData). */
#define BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"
static const unsigned char *bundle_entry(const unsigned char *b, size_t avail, size_t *out_n) {
  size_t magic = sizeof BUNDLE_MAGIC - 1, pos = magic + 8;
  if (avail < pos || memcmp(b, BUNDLE_MAGIC, magic) != 0) return NULL;
  uint64_t count;
  memcpy(&count, b + magic, 8);
  char want[64];
  snprintf(want, sizeof want, "%s", arch()->arch);
  for (uint64_t i = 0; i < count && i < 64; ++i) {
    uint64_t off, size, tlen;
    if (avail < pos + 24) return NULL;
    memcpy(&off, b + pos, 8);
    memcpy(&size, b + pos + 8, 8);
    memcpy(&tlen, b + pos + 16, 8);
    pos += 24;
    if (tlen > 256 || avail < pos + tlen) return NULL;
    char triple[257];
    memcpy(triple, b + pos, tlen);
    triple[tlen] = 0;
    pos += tlen;
    const char *dash = strstr(triple, "--");
    if (!strstr(triple, "amdgcn") || !dash) continue;
    size_t wl = strlen(want);
    if (strncmp(dash + 2, want, wl) != 0 || (dash[2 + wl] != 0 && dash[2 + wl] != ':')) continue;
    if (off > avail || size > avail - off || size < 64) return NULL;
    *out_n = size;
    return b + off;
  }
  return NULL;
}

/* The ELF code object in `image` (itself, or this device's entry of an offload bundle). */
static const unsigned char *code_object(const unsigned char *image, size_t avail, size_t *n) {
  const unsigned char *elf = bundle_entry(image, avail, n);
  if (elf) return elf_size(elf) ? elf : NULL;
  *n = elf_size(image);
  return *n ? image : NULL;
}

EXPORT hipError_t hipModuleLoadData(hipModule_t *m, const void *image) {
  INJECT("hipModuleLoadData");
  if (!m || !image) return failed("hipModuleLoadData", hipErrorInvalidValue, "NULL argument");
  size_t n;
  const unsigned char *elf = code_object(image, SIZE_MAX, &n);
  if (!elf) return failed("hipModuleLoadData", hipErrorInvalidImage,
                          "not an ELF64 code object nor an offload bundle for this architecture");
  return load_image("hipModuleLoadData", m, elf, n, NULL);
}

EXPORT hipError_t hipModuleLoad(hipModule_t *m, const char *path) {
  INJECT("hipModuleLoad");
  if (!m || !path) return failed("hipModuleLoad", hipErrorInvalidValue, "NULL argument");
  FILE *f = fopen(path, "rb");
  if (!f) return failed("hipModuleLoad", hipErrorFileNotFound, "cannot open the code object");
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
  size_t got = fread(buf, 1, (size_t)(n > 0 ? n : 0), f);
  fclose(f);
  size_t len = 0;
  const unsigned char *elf = got >= 64 ? code_object(buf, got, &len) : NULL;
  hipError_t r = elf && len <= got - (size_t)(elf - buf)
                     ? load_image("hipModuleLoad", m, elf, len, path)
                     : failed("hipModuleLoad", hipErrorInvalidImage,
                              "not an ELF64 code object nor an offload bundle for this architecture");
  free(buf);
  return r;
}

EXPORT hipError_t hipModuleUnload(hipModule_t m) {
  if (!m) return failed("hipModuleUnload", hipErrorInvalidHandle, "NULL module");
  log_line("\"event\":\"module_unload\",\"module\":%u", ((module_t *)m)->id);
  return hipSuccess; /* kept: functions from it may still be referenced by recorded launches */
}

EXPORT hipError_t hipModuleGetFunction(hipFunction_t *f, hipModule_t m, const char *name) {
  INJECT("hipModuleGetFunction");
  if (!f || !m || !name) return failed("hipModuleGetFunction", hipErrorInvalidValue, "NULL argument");
  if (!elf_has_symbol((module_t *)m, name)) return failed("hipModuleGetFunction", hipErrorNotFound, "no such kernel in the module");
  function_t *fn = calloc(1, sizeof *fn);
  fn->module = (module_t *)m;
  snprintf(fn->name, sizeof fn->name, "%s", name);
  *f = (hipFunction_t)fn;
  return hipSuccess;
}

/* ------------------------------------------------------------------------------- launches */
static hipdnn_stubgpu_on_launch_fn g_hook;
static int g_hook_state; /* 0: not looked at, 1: none wanted, 2: loaded, 3: failed to load */
static unsigned long g_launches;

static int hook_state(void) {
  pthread_mutex_lock(&g_lock);
  if (g_hook_state == 0) {
    const char *path = getenv("HIPDNN_STUBGPU_HOOK");
    g_hook_state = 1;
    if (path && *path) {
      /* the hook calls hipdnn_stubgpu_lookup: make this library's symbols global first */
      Dl_info self;
      if (dladdr((void *)&hipdnn_stubgpu_lookup, &self) && self.dli_fname) dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
      void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      g_hook = lib ? (hipdnn_stubgpu_on_launch_fn)dlsym(lib, "hipdnn_stubgpu_on_launch") : NULL;
      g_hook_state = g_hook ? 2 : 3;
      if (!g_hook) {
        char why[512];
        snprintf(why, sizeof why, "%s", dlerror());
        for (char *c = why; *c; ++c) if (*c == '"' || *c == '\\') *c = '\'';
        log_line("\"event\":\"error\",\"function\":\"dlopen\",\"why\":\"HIPDNN_STUBGPU_HOOK: %s\"", why);
      }
    }
  }
  int s = g_hook_state;
  pthread_mutex_unlock(&g_lock);
  return s;
}

static hipError_t launch(const char *api, function_t *fn, const unsigned global[3], const unsigned grid[3],
                         const unsigned block[3], unsigned shared, hipStream_t stream, void **params, void **extra) {
  INJECT(api);
  if (!fn) return failed(api, hipErrorInvalidHandle, "NULL function");
  if (bad_stream(stream)) return failed(api, hipErrorInvalidHandle, "not a stream");
  for (int i = 0; i < 3; ++i)
    if (!grid[i] || !block[i]) return failed(api, hipErrorInvalidValue, "empty grid or block");
  if ((unsigned long)block[0] * block[1] * block[2] > 1024) return failed(api, hipErrorInvalidValue, "block over 1024 work-items");
  const void *args = NULL;
  size_t size = 0;
  if (extra) {
    for (int i = 0; extra[i] != HIP_LAUNCH_PARAM_END; i += 2) {
      if (extra[i] == HIP_LAUNCH_PARAM_BUFFER_POINTER) args = extra[i + 1];
      else if (extra[i] == HIP_LAUNCH_PARAM_BUFFER_SIZE) size = *(size_t *)extra[i + 1];
    }
  }
  char hex[2 * 1024 + 1];
  size_t shown = size < 1024 ? size : 1024;
  for (size_t i = 0; args && i < shown; ++i) sprintf(hex + 2 * i, "%02x", ((const unsigned char *)args)[i]);
  hex[args ? 2 * shown : 0] = 0;
  unsigned long seq = __atomic_add_fetch(&g_launches, 1, __ATOMIC_RELAXED);
  int hs = hook_state();
  log_line("\"event\":\"launch\",\"seq\":%lu,\"api\":\"%s\",\"kernel\":\"%s\",\"module\":%u,\"code_object_bytes\":%zu,"
           "\"fnv1a\":\"%016lx\",\"global\":[%u,%u,%u],\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"shared\":%u,"
           "\"stream\":%lu,\"kernarg_size\":%zu,\"kernarg\":\"%s\",\"params\":%s,\"hook\":%s",
           seq, api, fn->name, fn->module->id, fn->module->size, (unsigned long)fn->module->hash, global[0], global[1],
           global[2], grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, (unsigned long)(uintptr_t)stream,
           size, hex, params && !extra ? "true" : "false", hs == 2 ? "true" : "false");
  if (hs == 3) return failed(api, hipErrorLaunchFailure, "HIPDNN_STUBGPU_HOOK names a library that does not load");
  if (hs != 2) return hipSuccess;
  hipdnn_stubgpu_launch_t l = {fn->name, fn->module->image, fn->module->size, {grid[0], grid[1], grid[2]},
                               {block[0], block[1], block[2]}, shared, args, args ? size : 0, stream};
  int rc = g_hook(&l);
  if (rc != 0) {
    log_line("\"event\":\"error\",\"function\":\"%s\",\"kernel\":\"%s\",\"seq\":%lu,\"hook_status\":%d", api, fn->name, seq, rc);
    return hipErrorLaunchFailure;
  }
  return hipSuccess;
}

EXPORT hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx,
                                           uint32_t ly, uint32_t lz, size_t shared, hipStream_t s, void **params,
                                           void **extra, hipEvent_t start, hipEvent_t stop, uint32_t flags) {
  (void)flags;
  unsigned global[3] = {gx, gy, gz}, block[3] = {lx, ly, lz};
  unsigned grid[3] = {lx ? (gx + lx - 1) / lx : 0, ly ? (gy + ly - 1) / ly : 0, lz ? (gz + lz - 1) / lz : 0};
  if (start) hipEventRecord(start, s);
  hipError_t r = launch("hipExtModuleLaunchKernel", (function_t *)f, global, grid, block, (unsigned)shared, s, params, extra);
  if (stop) hipEventRecord(stop, s);
  return r;
}

EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                        unsigned bz, unsigned shared, hipStream_t s, void **params, void **extra) {
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz}, global[3] = {gx * bx, gy * by, gz * bz};
  return launch("hipModuleLaunchKernel", (function_t *)f, global, grid, block, shared, s, params, extra);
}

EXPORT hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                                   unsigned by, unsigned bz, unsigned shared, hipStream_t s,
                                                   void **params) {
  unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz}, global[3] = {gx * bx, gy * by, gz * bz};
  return launch("hipModuleLaunchCooperativeKernel", (function_t *)f, global, grid, block, shared, s, params, NULL);
}
