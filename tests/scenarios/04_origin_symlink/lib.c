#include <stdio.h>
#define STR_(x) #x
#define STR(x) STR_(x)
#ifdef NEXT
void NEXT(void);
#endif
#ifdef NEXT2
void NEXT2(void);
#endif
void NAME(void) {
    printf("  %s from %s\n", STR(NAME), WHERE);
#ifdef NEXT
    NEXT();
#endif
#ifdef NEXT2
    NEXT2();
#endif
}
