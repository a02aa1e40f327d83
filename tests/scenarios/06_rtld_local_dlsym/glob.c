int glob_fn(void) { return 7; }
