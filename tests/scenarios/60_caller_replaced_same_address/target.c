const char *which(void) { return WHICH; }
