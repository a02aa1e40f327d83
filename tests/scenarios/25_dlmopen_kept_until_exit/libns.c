int ns_value(void) { return 25; }
