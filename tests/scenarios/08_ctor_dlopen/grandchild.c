int grandchild_value(void) { return 43; }
