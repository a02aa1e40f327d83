/* Shared by the benchmark programs: argument parsing and the in-process clock. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline long arg_count(const char *s, const char *what)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 0) {
        fprintf(stderr, "bad %s: '%s'\n", what, s);
        exit(2);
    }
    return v;
}

/* The measured loop's time goes to stdout as "loop_ns=N": the harness reads
 * it, so process start-up and exit do not dilute per-operation figures. */
static inline void report_loop(long long t0)
{
    printf("loop_ns=%lld\n", now_ns() - t0);
}

#endif
