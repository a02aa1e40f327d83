int envonly(void) { return 1; }
