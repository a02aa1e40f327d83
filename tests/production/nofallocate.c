/* A file system without fallocate (NFS before 4.2, some FUSE file systems),
   for the launcher: preloaded into it, fallocate and fallocate64 fail with
   EOPNOTSUPP, as such a file system's do, and each refusal appends a line
   to $NOFALLOCATE_LOG, so a test can tell that the launcher really took
   the path of a file system without it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

static int refuse(int fd, int mode, off_t offset, off_t len) {
    const char *log = getenv("NOFALLOCATE_LOG");
    if (log) {
        FILE *f = fopen(log, "a");
        if (f) {
            fprintf(f, "fd=%d mode=%d offset=%lld len=%lld\n", fd, mode, (long long)offset,
                    (long long)len);
            fclose(f);
        }
    }
    errno = EOPNOTSUPP;
    return -1;
}

int fallocate(int fd, int mode, off_t offset, off_t len) { return refuse(fd, mode, offset, len); }

int fallocate64(int fd, int mode, off_t offset, off_t len) {
    return refuse(fd, mode, offset, len);
}
