const char *lib_where(void) { return WHERE; }
