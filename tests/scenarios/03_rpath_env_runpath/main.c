#include <stdio.h>
void p(void);
void mid(void);
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    p();   /* exe DT_RPATH beats LD_LIBRARY_PATH */
    mid(); /* libmid has DT_RUNPATH: LD_LIBRARY_PATH beats it; exe RPATH is not used */
    return 0;
}
