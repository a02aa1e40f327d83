/* The library the benchmark programs load: a constructor-free object with one
 * exported function, so that what a dlopen costs is the loader's work (and,
 * traced, the shim's), not the library's. run.sh builds it under CUDA-family
 * names (libcublas_bench*.so: recorded) and a plain name (not recorded). */
int bench_answer(void)
{
    return 42;
}
