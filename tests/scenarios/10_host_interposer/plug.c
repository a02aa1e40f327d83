const char *plug_name(void) { return NAME; }
