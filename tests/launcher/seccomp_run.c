/* seccomp_run PROGRAM [ARGS...]: runs PROGRAM under a seccomp filter that
 * kills the process on process_vm_readv(2) and allows everything else, the
 * way a sandbox that leaves out the @debug group does (systemd's
 * SystemCallFilter=@system-service; Docker's default profile refuses it on
 * old kernels). The filter is inherited across exec, so the traced program
 * runs filtered: `Seccomp: 2` in /proc/self/status (tests/launcher.rs). */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif

/* The architecture whose system call numbers the filter compares with: a
 * call made with another one (i386 on x86_64) is killed too, so that the
 * filter never lets process_vm_readv through under another number. */
#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "seccomp_run: add this architecture's AUDIT_ARCH_ value"
#endif

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: seccomp_run PROGRAM [ARGS...]\n");
        return 2;
    }
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        fprintf(stderr, "seccomp_run: cannot install the filter: %s\n", strerror(errno));
        return 3;
    }
    execvp(argv[1], argv + 1);
    fprintf(stderr, "seccomp_run: %s: %s\n", argv[1], strerror(errno));
    return 127;
}
