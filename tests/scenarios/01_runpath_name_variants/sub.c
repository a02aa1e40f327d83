/* One sub-library; built once per (name, version, place). */
#define CAT(a, b, c) a##b##c
#define FN(s) CAT(x_, s, _version)
const char *FN(SUB)(void) { return VERSION " (" WHERE ")"; }
