/* A stand-in libamdhip64 faking one RDNA3 gfx1100, for the amdkernels lane (test tooling only).
 *
 * Device memory is host memory (calloc, recorded so the emulator can bounds-check accesses).
 * Copies and memsets are real and synchronous; streams and events are tokens. Kernel launches
 * go to a handler the test process registers (amdemu_set_launch_handler), which runs the code
 * object on tools/rdna3's emulator; with no handler a launch fails, so nothing is left
 * silently unwritten. Module images are kept by pointer with their ELF size.
 */
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct { void *base; size_t size; } alloc_t;
static alloc_t *g_allocs;
static size_t g_nallocs, g_capallocs;

typedef struct { const void *image; size_t size; } module_t;
typedef struct { module_t *module; char name[256]; } function_t;

/* kernel name, image, image size, grid (work-items), block, shared bytes, kernargs, kernarg size */
typedef int (*launch_handler_t)(const char *, const void *, size_t, const uint32_t *, const uint32_t *,
                                uint32_t, const void *, size_t);
static launch_handler_t g_handler;
static double g_event_clock;

EXPORT void amdemu_set_launch_handler(launch_handler_t h) { g_handler = h; }

EXPORT int amdemu_lookup(const void *p, void **base, size_t *size) {
  uintptr_t a = (uintptr_t)p;
  for (size_t i = 0; i < g_nallocs; ++i) {
    uintptr_t b = (uintptr_t)g_allocs[i].base;
    if (a >= b && a < b + g_allocs[i].size) { *base = g_allocs[i].base; *size = g_allocs[i].size; return 1; }
  }
  return 0;
}

static void *dev_alloc(size_t n) {
  if (n == 0) n = 1;
  void *p = aligned_alloc(256, (n + 255) / 256 * 256);
  if (!p) return NULL;
  memset(p, 0xFF, (n + 255) / 256 * 256); /* NaN-filled: unwritten outputs stay visible */
  if (g_nallocs == g_capallocs) {
    g_capallocs = g_capallocs ? 2 * g_capallocs : 64;
    g_allocs = realloc(g_allocs, g_capallocs * sizeof *g_allocs);
  }
  g_allocs[g_nallocs].base = p; g_allocs[g_nallocs].size = n; g_nallocs++;
  return p;
}

static hipError_t dev_free(void *p) {
  if (!p) return hipSuccess;
  for (size_t i = 0; i < g_nallocs; ++i)
    if (g_allocs[i].base == p) { free(p); g_allocs[i] = g_allocs[--g_nallocs]; return hipSuccess; }
  return hipErrorInvalidValue;
}

EXPORT hipError_t hipInit(unsigned int f) { (void)f; return hipSuccess; }
EXPORT hipError_t hipGetDeviceCount(int *n) { *n = 1; return hipSuccess; }
EXPORT hipError_t hipGetDevice(int *d) { *d = 0; return hipSuccess; }
EXPORT hipError_t hipSetDevice(int d) { return d == 0 ? hipSuccess : hipErrorInvalidDevice; }
EXPORT hipError_t hipDeviceSynchronize(void) { return hipSuccess; }
EXPORT hipError_t hipGetLastError(void) { return hipSuccess; }
EXPORT hipError_t hipDriverGetVersion(int *v) { *v = 70253211; return hipSuccess; }
EXPORT hipError_t hipRuntimeGetVersion(int *v) { *v = 70253211; return hipSuccess; }
EXPORT const char *hipGetErrorString(hipError_t e) { return e == hipSuccess ? "no error" : "stub HIP error"; }
EXPORT const char *hipGetErrorName(hipError_t e) { return e == hipSuccess ? "hipSuccess" : "hipErrorStub"; }
EXPORT hipError_t hipDeviceGetName(char *name, int len, int d) {
  (void)d; strncpy(name, "AMD Radeon RX 7900 XTX (emulated)", (size_t)len); return hipSuccess;
}
EXPORT hipError_t hipDeviceTotalMem(size_t *b, int d) { (void)d; *b = (size_t)24 << 30; return hipSuccess; }
EXPORT hipError_t hipMemGetInfo(size_t *f, size_t *t) { *f = (size_t)20 << 30; *t = (size_t)24 << 30; return hipSuccess; }

EXPORT hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600 *p, int d) {
  (void)d;
  memset(p, 0, sizeof *p);
  strcpy(p->name, "AMD Radeon RX 7900 XTX (emulated)");
  strcpy(p->gcnArchName, "gfx1100");
  p->totalGlobalMem = (size_t)24 << 30;
  p->sharedMemPerBlock = 65536;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = p->maxThreadsDim[1] = p->maxThreadsDim[2] = 1024;
  p->maxGridSize[0] = p->maxGridSize[1] = p->maxGridSize[2] = 0x7FFFFFFF;
  p->clockRate = 2500000;
  p->memoryClockRate = 1250000;
  p->memoryBusWidth = 384;
  p->totalConstMem = 65536;
  p->major = 11;
  p->minor = 0;
  p->multiProcessorCount = 48;
  p->l2CacheSize = 6 << 20;
  p->maxThreadsPerMultiProcessor = 2048;
  p->maxSharedMemoryPerMultiProcessor = 65536;
  p->sharedMemPerMultiprocessor = 65536;
  p->pciBusID = 3;
  p->concurrentKernels = 1;
  p->integrated = 0;
  return hipSuccess;
}

EXPORT hipError_t hipDeviceGetAttribute(int *v, hipDeviceAttribute_t a, int d) {
  (void)d;
  switch (a) {
  case hipDeviceAttributeMultiprocessorCount: *v = 48; break;
  case hipDeviceAttributeMaxThreadsPerBlock: *v = 1024; break;
  case hipDeviceAttributeWarpSize: *v = 32; break;
  case hipDeviceAttributeMaxSharedMemoryPerBlock: *v = 65536; break;
  case hipDeviceAttributeComputeCapabilityMajor: *v = 11; break;
  case hipDeviceAttributeComputeCapabilityMinor: *v = 0; break;
  case hipDeviceAttributeClockRate: *v = 2500000; break;
  case hipDeviceAttributeL2CacheSize: *v = 6 << 20; break;
  default: *v = 0; break;
  }
  return hipSuccess;
}

EXPORT hipError_t hipMalloc(void **p, size_t n) { *p = dev_alloc(n); return *p ? hipSuccess : hipErrorOutOfMemory; }
EXPORT hipError_t hipHostMalloc(void **p, size_t n, unsigned int f) { (void)f; return hipMalloc(p, n); }
EXPORT hipError_t hipFree(void *p) { return dev_free(p); }
EXPORT hipError_t hipHostFree(void *p) { return dev_free(p); }
EXPORT hipError_t hipMemPtrGetInfo(void *p, size_t *size) {
  void *b; return amdemu_lookup(p, &b, size) ? hipSuccess : hipErrorInvalidValue;
}
EXPORT hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attr, const void *p) {
  void *b; size_t s;
  memset(attr, 0, sizeof *attr);
  if (!amdemu_lookup(p, &b, &s)) return hipErrorInvalidValue;
  attr->type = hipMemoryTypeDevice;
  attr->devicePointer = (void *)p;
  attr->device = 0;
  return hipSuccess;
}
EXPORT hipError_t hipMemcpy(void *d, const void *s, size_t n, hipMemcpyKind k) { (void)k; memmove(d, s, n); return hipSuccess; }
EXPORT hipError_t hipMemcpyAsync(void *d, const void *s, size_t n, hipMemcpyKind k, hipStream_t st) {
  (void)st; return hipMemcpy(d, s, n, k);
}
EXPORT hipError_t hipMemcpyWithStream(void *d, const void *s, size_t n, hipMemcpyKind k, hipStream_t st) {
  (void)st; return hipMemcpy(d, s, n, k);
}
EXPORT hipError_t hipMemset(void *d, int v, size_t n) { memset(d, v, n); return hipSuccess; }
EXPORT hipError_t hipMemsetAsync(void *d, int v, size_t n, hipStream_t s) { (void)s; memset(d, v, n); return hipSuccess; }

static int g_token;
EXPORT hipError_t hipStreamCreate(hipStream_t *s) { *s = (hipStream_t)(uintptr_t)(0x1000 + ++g_token); return hipSuccess; }
EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *s, unsigned int f) { (void)f; return hipStreamCreate(s); }
EXPORT hipError_t hipStreamDestroy(hipStream_t s) { (void)s; return hipSuccess; }
EXPORT hipError_t hipStreamSynchronize(hipStream_t s) { (void)s; return hipSuccess; }
EXPORT hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned int f) { (void)s; (void)e; (void)f; return hipSuccess; }

static double now_ms(void) {
  struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
EXPORT hipError_t hipEventCreate(hipEvent_t *e) { *e = (hipEvent_t)calloc(1, sizeof(double)); return hipSuccess; }
EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t *e, unsigned f) { (void)f; return hipEventCreate(e); }
EXPORT hipError_t hipEventDestroy(hipEvent_t e) { free(e); return hipSuccess; }
EXPORT hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) { (void)s; *(double *)e = now_ms(); return hipSuccess; }
EXPORT hipError_t hipEventSynchronize(hipEvent_t e) { (void)e; return hipSuccess; }
EXPORT hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b) {
  *ms = (float)(*(double *)b - *(double *)a); (void)g_event_clock; return hipSuccess;
}

/* An ELF64 image's size: the end of its section header table or of its last section. */
static size_t elf_size(const void *image) {
  const unsigned char *b = image;
  if (memcmp(b, "\x7f" "ELF", 4) != 0) return 0;
  uint64_t shoff; uint16_t shentsize, shnum;
  memcpy(&shoff, b + 0x28, 8); memcpy(&shentsize, b + 0x3A, 2); memcpy(&shnum, b + 0x3C, 2);
  size_t end = shoff + (size_t)shentsize * shnum;
  for (uint16_t i = 0; i < shnum; ++i) {
    uint32_t type; uint64_t off, size;
    const unsigned char *sh = b + shoff + (size_t)i * shentsize;
    memcpy(&type, sh + 4, 4); memcpy(&off, sh + 0x18, 8); memcpy(&size, sh + 0x20, 8);
    if (type != 8 && off + size > end) end = off + size;
  }
  return end;
}

/* A clang offload bundle ("__CLANG_OFFLOAD_BUNDLE__": MIOpen 3.4 loads its clang++-21 HIP
   kernels so): the gfx1100 entry (target features ignored), else NULL; reads stay below avail. */
#define BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"
static const unsigned char *bundle_entry(const unsigned char *b, size_t avail, size_t *out_n) {
  size_t magic = sizeof BUNDLE_MAGIC - 1, pos = magic + 8;
  if (avail < pos || memcmp(b, BUNDLE_MAGIC, magic) != 0) return NULL;
  uint64_t count;
  memcpy(&count, b + magic, 8);
  for (uint64_t i = 0; i < count && i < 64; ++i) {
    uint64_t off, size, tlen;
    if (avail < pos + 24) return NULL;
    memcpy(&off, b + pos, 8); memcpy(&size, b + pos + 8, 8); memcpy(&tlen, b + pos + 16, 8);
    pos += 24;
    if (tlen > 256 || avail < pos + tlen) return NULL;
    char triple[257];
    memcpy(triple, b + pos, tlen); triple[tlen] = 0;
    pos += tlen;
    const char *dash = strstr(triple, "--");
    if (!strstr(triple, "amdgcn") || !dash || strncmp(dash + 2, "gfx1100", 7) != 0
        || (dash[9] != 0 && dash[9] != ':')) continue;
    if (off > avail || size > avail - off || size < 64) return NULL;
    *out_n = size;
    return b + off;
  }
  return NULL;
}

static hipError_t load_module(hipModule_t *m, const unsigned char *image, size_t avail) {
  size_t n = 0;
  const unsigned char *elf = bundle_entry(image, avail, &n);
  if (elf) { if (!elf_size(elf) || elf_size(elf) > n) return hipErrorInvalidImage; }
  else { elf = image; n = avail >= 64 ? elf_size(image) : 0; if (!n || n > avail) return hipErrorInvalidImage; }
  module_t *mod = malloc(sizeof *mod);
  void *copy = malloc(n);
  memcpy(copy, elf, n);
  mod->image = copy; mod->size = n;
  *m = (hipModule_t)mod;
  return hipSuccess;
}

EXPORT hipError_t hipModuleLoadData(hipModule_t *m, const void *image) {
  if (!m || !image) return hipErrorInvalidValue;
  return load_module(m, image, SIZE_MAX);
}
EXPORT hipError_t hipModuleLoad(hipModule_t *m, const char *path) {
  if (!m || !path) return hipErrorInvalidValue;
  FILE *f = fopen(path, "rb");
  if (!f) return hipErrorFileNotFound;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
  size_t got = fread(buf, 1, (size_t)(n > 0 ? n : 0), f);
  fclose(f);
  hipError_t r = load_module(m, buf, got);
  free(buf);
  return r;
}
EXPORT hipError_t hipModuleUnload(hipModule_t m) { (void)m; return hipSuccess; /* kept: launches may be replayed */ }
EXPORT hipError_t hipModuleGetFunction(hipFunction_t *f, hipModule_t m, const char *name) {
  function_t *fn = calloc(1, sizeof *fn);
  fn->module = (module_t *)m;
  strncpy(fn->name, name, sizeof fn->name - 1);
  *f = (hipFunction_t)fn;
  return hipSuccess;
}

static hipError_t launch(function_t *fn, const uint32_t grid[3], const uint32_t block[3], uint32_t shared,
                         void **params, void **extra) {
  if (!g_handler) return hipErrorLaunchFailure;
  const void *args = NULL; size_t size = 0;
  if (extra) {
    for (int i = 0; extra[i] != HIP_LAUNCH_PARAM_END; i += 2) {
      if (extra[i] == HIP_LAUNCH_PARAM_BUFFER_POINTER) args = extra[i + 1];
      else if (extra[i] == HIP_LAUNCH_PARAM_BUFFER_SIZE) size = *(size_t *)extra[i + 1];
    }
  } else if (params) {
    return hipErrorNotSupported; /* kernelParams need the argument layout: not used by MIOpen */
  }
  return g_handler(fn->name, fn->module->image, fn->module->size, grid, block, shared, args, size)
             ? hipErrorLaunchFailure : hipSuccess;
}

EXPORT hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
                                           uint32_t lx, uint32_t ly, uint32_t lz, size_t shared,
                                           hipStream_t s, void **params, void **extra,
                                           hipEvent_t start, hipEvent_t stop, uint32_t flags) {
  (void)s; (void)flags;
  uint32_t grid[3] = {gx, gy, gz}, block[3] = {lx, ly, lz};
  if (start) hipEventRecord(start, s);
  hipError_t r = launch((function_t *)f, grid, block, (uint32_t)shared, params, extra);
  if (stop) hipEventRecord(stop, s);
  return r;
}

EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                        unsigned by, unsigned bz, unsigned shared, hipStream_t s,
                                        void **params, void **extra) {
  (void)s;
  uint32_t grid[3] = {gx * bx, gy * by, gz * bz}, block[3] = {bx, by, bz};
  return launch((function_t *)f, grid, block, shared, params, extra);
}

EXPORT hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
                                                   unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                                   hipStream_t s, void **params) {
  return hipModuleLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, params, NULL);
}
