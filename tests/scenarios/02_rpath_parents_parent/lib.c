/* Generic chain library: NAME() prints itself and calls NEXT() if given. */
#include <stdio.h>
#define STR_(x) #x
#define STR(x) STR_(x)
#ifdef NEXT
void NEXT(void);
#endif
void NAME(void) {
    printf("  %s (%s)\n", STR(NAME), WHERE);
#ifdef NEXT
    NEXT();
#endif
}
