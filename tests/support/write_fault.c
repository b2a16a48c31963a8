/* Write-fault injection for the data-loss tests (tests/output_safety_test.cpp), loaded with LD_PRELOAD
 * into the clmbench binary. It wraps write/pwrite/pwrite64 and, for files whose path contains
 * CLM_FAULT_PATH, fails writes once more than CLM_FAULT_AFTER_BYTES bytes have gone to such files:
 *   CLM_FAULT_ERRNO  the errno to fail with (default 28, ENOSPC; 5 is EIO)
 *   CLM_FAULT_MODE   "once": only the first write past the limit fails (a transient I/O error);
 *                    "full" (default): every write past the limit fails (a full disk).
 * Anything else passes through unchanged. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static long long g_written = 0;
static int g_failed_once = 0;

static int matches(int fd) {
  const char* pattern = getenv("CLM_FAULT_PATH");
  if (!pattern || !*pattern) return 0;
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return 0;
  target[n] = 0;
  return strstr(target, pattern) != NULL;
}

/* Returns 1 when this write must fail (errno set). */
static int inject(int fd, size_t count) {
  if (!matches(fd)) return 0;
  const char* after = getenv("CLM_FAULT_AFTER_BYTES");
  const long long limit = after ? atoll(after) : 0;
  const char* mode = getenv("CLM_FAULT_MODE");
  const int once = mode && strcmp(mode, "once") == 0;
  if (g_written + (long long)count > limit && !(once && g_failed_once)) {
    g_failed_once = 1;
    const char* e = getenv("CLM_FAULT_ERRNO");
    errno = e ? atoi(e) : ENOSPC;
    return 1;
  }
  g_written += (long long)count;
  return 0;
}

ssize_t write(int fd, const void* buf, size_t count) {
  static ssize_t (*real)(int, const void*, size_t) = NULL;
  if (!real) real = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  if (inject(fd, count)) return -1;
  return real(fd, buf, count);
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  static ssize_t (*real)(int, const void*, size_t, off_t) = NULL;
  if (!real) real = (ssize_t(*)(int, const void*, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
  if (inject(fd, count)) return -1;
  return real(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off64_t offset) {
  static ssize_t (*real)(int, const void*, size_t, off64_t) = NULL;
  if (!real) real = (ssize_t(*)(int, const void*, size_t, off64_t))dlsym(RTLD_NEXT, "pwrite64");
  if (inject(fd, count)) return -1;
  return real(fd, buf, count, offset);
}
