const char *dep_name(void) { return NAME; }
