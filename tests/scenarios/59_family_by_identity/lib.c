/* Stand-ins for renamed copies and stubs: each defines what its kind
 * defines (DEFINES: cudnn, cudart, cuda or nothing), nothing more. */
#define API __attribute__((visibility("default")))

#if defined(DEFINES_cudnn)
API unsigned long cudnnGetVersion(void) { return 91900; }
#elif defined(DEFINES_cudart)
API int cudaRuntimeGetVersion(int *v) { *v = 12040; return 0; }
#elif defined(DEFINES_cuda)
API int cuInit(unsigned flags) { (void)flags; return 34; /* CUDA_ERROR_STUB_LIBRARY */ }
#endif

API const char *which(void) { return WHICH; }
