/* A stand-in librocblas whose calls succeed, for the real libMIOpen over the stub GPU (test tooling).
 *
 * Exports every rocblas symbol Debian's libMIOpen 3.4/3.5 imports. A handle is a token; GEMMs
 * compute nothing and are recorded (as "rocblas" events) in the HIPDNN_STUBGPU_LOG file, so
 * MIOpen's GEMM-based convolution solutions (GemmFwdRest, ...) run their other kernels for real.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static void record(const char *function) {
  const char *path = getenv("HIPDNN_STUBGPU_LOG");
  if (!path || !*path) return;
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char buf[256];
  int n = snprintf(buf, sizeof buf, "{\"pid\":%d,\"event\":\"rocblas\",\"function\":\"%s\"}\n", (int)getpid(), function);
  ssize_t w = write(fd, buf, (size_t)n);
  (void)w;
  close(fd);
}

typedef struct { unsigned magic; int atomics; } handle_t;

EXPORT int rocblas_create_handle(handle_t **h) {
  record("rocblas_create_handle");
  if (!h) return 3; /* rocblas_status_invalid_pointer */
  *h = calloc(1, sizeof **h);
  (*h)->magic = 0xB1A5u;
  (*h)->atomics = 1;
  return 0;
}
EXPORT int rocblas_destroy_handle(handle_t *h) {
  record("rocblas_destroy_handle");
  if (!h || h->magic != 0xB1A5u) return 1; /* rocblas_status_invalid_handle */
  h->magic = 0;
  free(h);
  return 0;
}
EXPORT int rocblas_set_stream(handle_t *h, void *stream) { (void)stream; return h && h->magic == 0xB1A5u ? 0 : 1; }
EXPORT int rocblas_get_atomics_mode(handle_t *h, int *mode) {
  if (!h || !mode) return 1;
  *mode = h->atomics;
  return 0;
}
EXPORT int rocblas_set_atomics_mode(handle_t *h, int mode) {
  if (!h) return 1;
  h->atomics = mode;
  return 0;
}

#define GEMM(name) EXPORT int name(handle_t *h) { record(#name); return h && h->magic == 0xB1A5u ? 0 : 1; }
GEMM(rocblas_gemm_ex)
GEMM(rocblas_gemm_ex3)
GEMM(rocblas_gemm_strided_batched_ex)
GEMM(rocblas_gemm_strided_batched_ex3)
GEMM(rocblas_sgemv)
