const char *lib_name(void) { return NAME; }
