/* One library of the scenario; ID names the copy. */
const char *id(void) { return ID; }
