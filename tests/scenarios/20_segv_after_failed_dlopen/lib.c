int lib_value(void) { return 1; }
