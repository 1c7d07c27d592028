/* The stub GPU's launch hook: how an emulator runs the kernels the real MIOpen launches.
 *
 * Test tooling only (tools/stub_hip, never in the wheel). The stub libamdhip64 of this directory
 * (stub_hip.c) records every kernel launch. To have launches *executed*, build a shared library
 * that exports
 *
 *     int hipdnn_stubgpu_on_launch(const hipdnn_stubgpu_launch_t *launch);
 *
 * and name it in the environment variable HIPDNN_STUBGPU_HOOK (a path given to dlopen) before
 * the first launch. Contract:
 *
 *   - The stub dlopens the hook once, at the first launch. If HIPDNN_STUBGPU_HOOK is set but the
 *     library or the symbol cannot be loaded, every launch fails (hipErrorLaunchFailure) and the
 *     log names the problem: nothing is left silently unexecuted.
 *   - The hook is called synchronously, on the launching thread, for every launch
 *     (hipExtModuleLaunchKernel, hipModuleLaunchKernel, hipModuleLaunchCooperativeKernel), after
 *     the launch was recorded in the log. Streams are not queues: when the call returns, the
 *     kernel has finished.
 *   - Return 0 for success; any other value makes the launch return hipErrorLaunchFailure (the
 *     status is recorded in the log as the launch's "hook_status").
 *   - Every pointer in the struct is valid only during the call (copy what you keep). The code
 *     object is the whole ELF image the module was loaded from (hipModuleLoadData or
 *     hipModuleLoad), the same bytes for every launch from that module.
 *   - grid[] counts WORKGROUPS (hipExtModuleLaunchKernel's global work size is divided by the
 *     block, rounding up); block[] counts work-items. kernarg is the explicit argument buffer
 *     MIOpen passed (HIP_LAUNCH_PARAM_BUFFER_POINTER, kernarg_size bytes); hidden arguments
 *     (offsets, sizes, queue pointers) are the hook's to append, as a packet processor does.
 *     A launch through kernelParams (no argument buffer) has kernarg NULL and kernarg_size 0.
 *   - Device memory is host memory: a device address is a host address. Allocations made through
 *     the stub (hipMalloc, hipHostMalloc) are live until hipFree; fresh ones are filled with 0xFF
 *     bytes (NaN in fp32/fp16/bf16) so unwritten outputs are visible. hipMemcpy* and hipMemset*
 *     are real, synchronous host copies.
 *   - The stub exports hipdnn_stubgpu_lookup (below) so the hook can bounds-check an address: it
 *     returns 0 and the allocation's base and size when p lies inside a live allocation, and
 *     non-zero otherwise (memory the caller owns, e.g. a numpy array, is not an allocation).
 *   - The fake device is chosen by HIPDNN_STUBGPU_ARCH (gfx90a, gfx942, gfx1100); the hook can
 *     ask for its properties through hipGetDevicePropertiesR0600 as any HIP program does.
 */
#ifndef HIPDNN_STUBGPU_HOOK_H
#define HIPDNN_STUBGPU_HOOK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One kernel launch, as handed to hipdnn_stubgpu_on_launch. */
typedef struct hipdnn_stubgpu_launch_t {
  const char *kernel_name;      /* the symbol passed to hipModuleGetFunction */
  const void *code_object;      /* the module's ELF image (AMDGPU code object) */
  size_t code_object_size;      /* its size in bytes */
  unsigned grid[3];             /* workgroups in x, y, z */
  unsigned block[3];            /* work-items per workgroup in x, y, z */
  unsigned shared_mem_bytes;    /* dynamic LDS requested by the launch */
  const void *kernarg;          /* explicit kernel arguments (NULL for a kernelParams launch) */
  size_t kernarg_size;          /* bytes at kernarg */
  void *stream;                 /* the hipStream_t of the launch (NULL: default stream) */
} hipdnn_stubgpu_launch_t;

/* Implemented by the hook library named in HIPDNN_STUBGPU_HOOK. 0 = the kernel ran. */
typedef int (*hipdnn_stubgpu_on_launch_fn)(const hipdnn_stubgpu_launch_t *launch);

/* Exported by the stub libamdhip64: 0 when p is inside a live allocation (base/size set). */
int hipdnn_stubgpu_lookup(const void *p, void **base, size_t *size);

#ifdef __cplusplus
}
#endif

#endif /* HIPDNN_STUBGPU_HOOK_H */
