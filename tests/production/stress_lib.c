/* One of the stress test's libraries (built once per thread, under a
   CUDA-family name so that every load and unload is an event). */
int cdt_stress_value(void) { return 1; }
