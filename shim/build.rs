//! Holds the audit library to the glibc 2.17 floor with the host's own
//! toolchain (issue 11; `src/floor.rs` says how).
//!
//! A shared object built on a new glibc binds each libc function to the
//! newest version of it there (`stat@GLIBC_2.33`), and an older glibc then
//! refuses to load it. Most functions Rust's std and the shim call have kept
//! the version they had in 2.17; the few below have not. `--wrap=NAME` makes
//! the static linker send every reference to NAME, std's included, to
//! `__wrap_NAME`, which `src/floor.rs` defines on top of `syscall(2)`
//! (GLIBC_2.2.5). `tests/glibc_floor.rs` and `scripts/glibc-floor.sh` fail
//! when a new std or libc adds a name to this list.

/// Functions whose default version is newer than GLIBC_2.17 and that the
/// shim reaches (directly or through std). Each has a `__wrap_` definition
/// in `src/floor.rs`.
const WRAPPED: &[&str] = &[
    "stat",
    "stat64",
    "lstat",
    "lstat64",
    "fstat",
    "fstat64",
    "fstatat",
    "fstatat64",
    "statx",
    "gettid",
    // std's thread-local destructor registration, which an unoptimised
    // build keeps although the shim registers none (its thread-locals are
    // const and Drop-free: audit.rs says why); see `src/floor.rs`.
    "pthread_key_create",
    "pthread_key_delete",
    "pthread_setspecific",
    "__cxa_thread_atexit_impl",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os != "linux" || env != "gnu" {
        return;
    }
    for name in WRAPPED {
        // Only the cdylib: the unit tests link as an ordinary program.
        println!("cargo:rustc-cdylib-link-arg=-Wl,--wrap={name}");
    }
}
