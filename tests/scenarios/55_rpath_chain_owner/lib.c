/* libr.so (DT_NEEDED libq.so) and libq.so. */
#include <stdio.h>

#ifdef NEEDS_Q
const char *q(void);
const char *r(void) { return q(); }
#else
const char *q(void) { return "libq.so from X/sub"; }
#endif
