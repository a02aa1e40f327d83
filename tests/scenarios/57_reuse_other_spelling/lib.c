const char *id(void) { return "D1/libd.so"; }
