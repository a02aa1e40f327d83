//! The glibc 2.17 floor (issue 11): replacements for the libc functions
//! whose current symbol version is newer than glibc 2.17.
//!
//! `build.rs` links the library with `--wrap=NAME` for each of them, so
//! every call to `stat`, `fstat`, `statx`, `gettid`, … in the shim and in
//! Rust's std lands here instead of binding to `stat@GLIBC_2.33` and the
//! like. Each is the system call itself through `syscall(2)`
//! (`GLIBC_2.2.5`), with glibc's return convention (-1 and `errno` on
//! failure), and the kernel's `struct stat`, which is glibc's on x86_64 and
//! aarch64. `statx` and `gettid` are also older than some kernels and
//! glibcs the shim runs on: the kernel answers `ENOSYS`, which std already
//! handles (it falls back to `fstatat`).
//!
//! This keeps the shim buildable with the host toolchain alone (`cargo
//! build` on any glibc), with no versioned stub library such as zig's.
//! `scripts/glibc-floor.sh` and `tests/glibc_floor.rs` check the result.

use core::ffi::{c_char, c_int, c_long, c_uint};

unsafe fn stat_at(dirfd: c_int, path: *const c_char, buf: *mut libc::stat, flags: c_int) -> c_int {
    libc::syscall(
        libc::SYS_newfstatat,
        dirfd as c_long,
        path,
        buf,
        flags as c_long,
    ) as c_int
}

/// # Safety
/// As `stat(2)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_stat(path: *const c_char, buf: *mut libc::stat) -> c_int {
    stat_at(libc::AT_FDCWD, path, buf, 0)
}

/// # Safety
/// As `stat64(2)` (the same structure on 64-bit Linux).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_stat64(path: *const c_char, buf: *mut libc::stat) -> c_int {
    stat_at(libc::AT_FDCWD, path, buf, 0)
}

/// # Safety
/// As `lstat(2)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_lstat(path: *const c_char, buf: *mut libc::stat) -> c_int {
    stat_at(libc::AT_FDCWD, path, buf, libc::AT_SYMLINK_NOFOLLOW)
}

/// # Safety
/// As `lstat64(2)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_lstat64(path: *const c_char, buf: *mut libc::stat) -> c_int {
    stat_at(libc::AT_FDCWD, path, buf, libc::AT_SYMLINK_NOFOLLOW)
}

/// # Safety
/// As `fstat(2)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_fstat(fd: c_int, buf: *mut libc::stat) -> c_int {
    libc::syscall(libc::SYS_fstat, fd as c_long, buf) as c_int
}

/// # Safety
/// As `fstat64(2)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_fstat64(fd: c_int, buf: *mut libc::stat) -> c_int {
    libc::syscall(libc::SYS_fstat, fd as c_long, buf) as c_int
}

/// # Safety
/// As `fstatat(2)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_fstatat(
    dirfd: c_int,
    path: *const c_char,
    buf: *mut libc::stat,
    flags: c_int,
) -> c_int {
    stat_at(dirfd, path, buf, flags)
}

/// # Safety
/// As `fstatat64(2)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_fstatat64(
    dirfd: c_int,
    path: *const c_char,
    buf: *mut libc::stat,
    flags: c_int,
) -> c_int {
    stat_at(dirfd, path, buf, flags)
}

/// # Safety
/// As `statx(2)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_statx(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mask: c_uint,
    buf: *mut libc::statx,
) -> c_int {
    libc::syscall(
        libc::SYS_statx,
        dirfd as c_long,
        path,
        flags as c_long,
        mask as c_long,
        buf,
    ) as c_int
}

/// # Safety
/// As `gettid(2)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_gettid() -> libc::pid_t {
    libc::syscall(libc::SYS_gettid) as libc::pid_t
}

// std's thread-local destructor registration (`pthread_key_*` moved to
// GLIBC_2.34 with libpthread's merge into libc; `__cxa_thread_atexit_impl`
// is GLIBC_2.18). The shim's thread-locals are const-initialised and have
// no destructor, on purpose: the audit namespace's libc never sees the
// program's threads exit, so a destructor would never run. Nothing in the
// shim registers one, so these are never called; an unoptimised build only
// keeps std's code that could. Should that change, registration fails
// cleanly (an error code std turns into a panic, which every FFI entry
// point catches) instead of the shim failing to load on an older glibc.

/// # Safety
/// Never called (see above).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_pthread_key_create(
    _key: *mut libc::pthread_key_t,
    _dtor: Option<unsafe extern "C" fn(*mut libc::c_void)>,
) -> c_int {
    libc::EAGAIN
}

/// # Safety
/// Never called (see above).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_pthread_key_delete(_key: libc::pthread_key_t) -> c_int {
    libc::EINVAL
}

/// # Safety
/// Never called (see above).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap_pthread_setspecific(
    _key: libc::pthread_key_t,
    _value: *const libc::c_void,
) -> c_int {
    libc::EINVAL
}

/// # Safety
/// Never called (see above): a destructor is not registered (`-1`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __wrap___cxa_thread_atexit_impl(
    _dtor: unsafe extern "C" fn(*mut libc::c_void),
    _obj: *mut libc::c_void,
    _dso: *mut libc::c_void,
) -> c_int {
    -1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrappers_answer_as_libc_does() {
        let path = c"/proc/self";
        // SAFETY: valid path and buffers.
        unsafe {
            let (mut a, mut b): (libc::stat, libc::stat) =
                (core::mem::zeroed(), core::mem::zeroed());
            assert_eq!(__wrap_stat(path.as_ptr(), &mut a), 0);
            assert_eq!(libc::stat(path.as_ptr(), &mut b), 0);
            assert_eq!(
                (a.st_dev, a.st_ino, a.st_mode),
                (b.st_dev, b.st_ino, b.st_mode)
            );
            assert_eq!(__wrap_lstat(path.as_ptr(), &mut a), 0);
            assert_eq!(a.st_mode & libc::S_IFMT, libc::S_IFLNK);
            assert_eq!(__wrap_fstat(0, &mut a), libc::fstat(0, &mut b));
            assert_eq!(__wrap_stat(c"/nonexistent/x".as_ptr(), &mut a), -1);
            assert_eq!(*libc::__errno_location(), libc::ENOENT);
            assert_eq!(
                __wrap_gettid(),
                libc::syscall(libc::SYS_gettid) as libc::pid_t
            );
        }
    }
}
