#ifdef NEEDS
int NEEDS(void);
int use(void) { return NEEDS(); }
#else
int good(void) { return 11; }
#endif
