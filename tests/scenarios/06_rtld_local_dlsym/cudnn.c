/* A fake libcudnn.so.9, opened RTLD_LOCAL the way TensorFlow and ctypes do. */
#include <stddef.h>
static int calls;
size_t cudnnGetVersion(void) { calls++; return 90100; }
const char *cudnnGetErrorString(int status) { return status ? "CUDNN_STATUS_NOT_INITIALIZED" : "CUDNN_STATUS_SUCCESS"; }
int cudnn_calls(void) { return calls; }
