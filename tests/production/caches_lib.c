/* A library for caches.c, built twice with different build-ids. */
int caches_lib_answer(void) { return 42; }
