/* heapcheck: does this process's malloc grow a brk heap? It allocates once
 * (the first allocation of a program's own code), then prints "heap=1" when
 * /proc/self/maps has a "[heap]" line, "heap=0" when not.
 *
 * glibc's malloc uses brk for its main arena only when it was initialised
 * after __libc_early_init marked the libc as the process's initial one
 * (malloc/arena.c, ptmalloc_init: `if (!__libc_initial)
 * __always_fail_morecore = true`). An audit module that defines
 * la_symbind64 makes ld.so call the program's calloc before that (the
 * l_reloc_result array of ld.so's own re-relocation, elf/dl-reloc.c), and
 * the main arena then lives in 1 MiB mmap chunks for the life of the
 * process (docs/glibc.md, "the heap on 2.35 and 2.36"): bench/floor.sh
 * shows which audit modules do it and what it costs Python's start. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    char *volatile p = malloc(100);
    char line[512];
    int heap = 0;
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps)
        return 1;
    while (fgets(line, sizeof line, maps))
        if (strstr(line, "[heap]"))
            heap = 1;
    fclose(maps);
    free(p);
    printf("heap=%d\n", heap);
    return 0;
}
