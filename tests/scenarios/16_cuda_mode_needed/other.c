int other_value(void) { return 3; }
