int extra_value(void) { return 5; }
