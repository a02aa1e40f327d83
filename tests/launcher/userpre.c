/* userpre: the user's own LD_PRELOAD library. Its constructor says which
 * program it runs in, on stderr (tests/launcher.rs). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>

__attribute__((constructor)) static void userpre_init(void)
{
    fprintf(stderr, "[userpre ctor in %s]\n", program_invocation_short_name);
}
