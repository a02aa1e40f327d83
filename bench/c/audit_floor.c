/* audit_floor: rtld-audit modules that do nothing, to measure what LD_AUDIT
 * itself costs in glibc (bench/floor.sh). Built four ways:
 *   -DVERSION_ONLY                    la_version alone;
 *   -DSYMBIND_ONLY                    la_version and la_symbind64: what
 *                                     defining la_symbind64 alone costs
 *                                     (bench/c/heapcheck.c says why);
 *   (default)                         every callback libcdtrace.so defines,
 *                                     each returning at once;
 * and each either linked with libc (-Wl,--no-as-needed -lc: glibc then loads
 * a second libc.so.6 into the audit namespace, as it does for the shim) or
 * with -nostdlib (no libc at all). Whatever the shim costs beyond the module
 * of the same shape is the shim's own. */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>

unsigned int la_version(unsigned int version)
{
    return version;
}

#if !defined VERSION_ONLY && !defined SYMBIND_ONLY
char *la_objsearch(const char *name, uintptr_t *cookie, unsigned int flag)
{
    (void)cookie;
    (void)flag;
    return (char *)name;
}

unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
    (void)map;
    (void)lmid;
    (void)cookie;
    return 0;
}

unsigned int la_objclose(uintptr_t *cookie)
{
    (void)cookie;
    return 0;
}

void la_activity(uintptr_t *cookie, unsigned int flag)
{
    (void)cookie;
    (void)flag;
}

void la_preinit(uintptr_t *cookie)
{
    (void)cookie;
}
#endif

#ifndef VERSION_ONLY

uintptr_t la_symbind64(Elf64_Sym *sym, unsigned int ndx, uintptr_t *refcook, uintptr_t *defcook,
                       unsigned int *flags, const char *symname)
{
    (void)ndx;
    (void)refcook;
    (void)defcook;
    (void)flags;
    (void)symname;
    return sym->st_value;
}
#endif
