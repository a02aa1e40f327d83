/* A cuDNN 9 dispatcher that only tells its version (pin directory of
   secure.c's test; link target of window.c's). */
int cudnnGetVersion(void) { return 91900; }
