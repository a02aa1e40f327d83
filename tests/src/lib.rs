//! Test support (see tests/README.md).
