#include <stdio.h>
#define STR_(x) #x
#define STR(x) STR_(x)
#ifdef NEXT1
void NEXT1(void);
#endif
#ifdef NEXT2
void NEXT2(void);
#endif
void NAME(void) {
    printf("  %s from %s\n", STR(NAME), WHERE);
#ifdef NEXT1
    NEXT1();
#endif
#ifdef NEXT2
    NEXT2();
#endif
}
