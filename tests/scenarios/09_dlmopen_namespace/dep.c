int dep_value(void) { return VALUE; }
