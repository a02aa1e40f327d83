int lib_value(void) { return VALUE; }
