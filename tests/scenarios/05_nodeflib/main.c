#include <stdio.h>
#include <string.h>

void nd_open(const char *name, const char *label);
void plain_open(const char *name, const char *label);

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    /* A system library that is in ld.so.cache, and one that is only found in
     * a default directory (build.sh picks the real file behind libz.so.1,
     * whose versioned name the cache does not list). */
    char dflt[256] = "";
    FILE *f = fopen("defaultlib.txt", "r");
    if (!f || !fgets(dflt, sizeof dflt, f)) return 2;
    fclose(f);
    dflt[strcspn(dflt, "\n")] = 0;

    nd_open("libBrokenLocale.so.1", NULL); /* nodeflib: no cache -> fails */
    nd_open("libenvonly.so", NULL);        /* LD_LIBRARY_PATH still applies */
    nd_open(dflt, "default-dir lib");      /* nodeflib: no default dirs -> fails */
    plain_open("libBrokenLocale.so.1", NULL);  /* ld.so.cache */
    plain_open(dflt, "default-dir lib");       /* default dir */
    nd_open("libBrokenLocale.so.1", NULL); /* already loaded: nodeflib does not matter */
    plain_open("libz.so.1", NULL);         /* cache path, same file as the default-dir one */
    return 0;
}
