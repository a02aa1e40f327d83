//! The process and thread ids, without a system call each time.
//!
//! glibc has not cached `getpid()` since 2.25, and the shim needs the pid
//! for every lock it takes ([`crate::lock`]) and every event it writes, the
//! tid for every event: that was most of the system calls the shim made
//! (issue 10). Both are cached here, and the caches are made right in every
//! child without a fork hook:
//!
//! - the pid lives in a page of its own marked `MADV_WIPEONFORK` (Linux
//!   4.14): the kernel hands any child made by copying the address space
//!   (`fork`, `clone` without `CLONE_VM`, whether libc's `fork` ran its
//!   handlers or the program made the system call itself) a zeroed copy, and
//!   zero means "ask the kernel". A fork hook could not do this: the audit
//!   namespace's libc never sees the program's `fork`, the preload helper's
//!   handler exists only when the helper is loaded, and a raw `clone` runs
//!   no handler at all;
//! - the tid is cached per thread together with the pid it was read under:
//!   a new pid (a child) reads the tid again.
//!
//! A child that shares the address space (`vfork`, `clone(CLONE_VM)`
//! without `CLONE_THREAD`) sees the parent's cache; such a child may only
//! `exec` or `_exit` (POSIX), and neither runs the shim. The page is filled
//! when the shim starts ([`init`]), so that such a child never writes it.
//! Where the kernel refuses `MADV_WIPEONFORK`, every call asks the kernel,
//! as before.

use core::cell::Cell;
use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

/// The cached pid (0: not known in this process image), in a page marked
/// `MADV_WIPEONFORK`; null when there is no such page.
static PID: AtomicPtr<AtomicU32> = AtomicPtr::new(core::ptr::null_mut());

thread_local! {
    /// (pid, tid) of the calling thread, as last read; const-initialised and
    /// without a destructor (see `audit.rs` on thread exit in the audit
    /// namespace).
    static TID: Cell<(u32, u32)> = const { Cell::new((0, 0)) };
}

/// Maps the wipe-on-fork page and fills it. Called once, when the shim
/// stays in the process (`la_version`): two system calls, then none.
pub fn init() {
    if !PID.load(Ordering::Acquire).is_null() {
        return;
    }
    // SAFETY: a fresh anonymous page of our own; no pointer into it exists
    // until it is published below.
    unsafe {
        let page = libc::mmap(
            core::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if page == libc::MAP_FAILED {
            return;
        }
        if libc::madvise(page, 4096, libc::MADV_WIPEONFORK) != 0 {
            libc::munmap(page, 4096);
            return;
        }
        let cell = page as *mut AtomicU32;
        (*cell).store(libc::getpid() as u32, Ordering::Relaxed);
        if PID
            .compare_exchange(
                core::ptr::null_mut(),
                cell,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            libc::munmap(page, 4096);
        }
    }
}

/// The calling process's id.
pub fn pid() -> u32 {
    let cell = PID.load(Ordering::Acquire);
    if cell.is_null() {
        // SAFETY: getpid has no preconditions.
        return unsafe { libc::getpid() } as u32;
    }
    // SAFETY: the page is never unmapped once published.
    let cell = unsafe { &*cell };
    match cell.load(Ordering::Relaxed) {
        0 => {
            // A child: its copy of the page was wiped.
            // SAFETY: getpid has no preconditions.
            let me = unsafe { libc::getpid() } as u32;
            cell.store(me, Ordering::Relaxed);
            me
        }
        me => me,
    }
}

/// The calling thread's id.
pub fn tid() -> u32 {
    let me = pid();
    TID.try_with(|c| {
        let (p, t) = c.get();
        if p == me && t != 0 {
            return t;
        }
        let t = read_tid();
        c.set((me, t));
        t
    })
    .unwrap_or_else(|_| read_tid())
}

fn read_tid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_the_kernels_and_a_forked_child_gets_its_own() {
        init();
        // SAFETY: plain system calls.
        let (kpid, ktid) = unsafe { (libc::getpid() as u32, read_tid()) };
        assert_eq!(pid(), kpid);
        assert_eq!(tid(), ktid);
        let other = std::thread::spawn(tid).join().unwrap();
        assert_ne!(other, ktid);
        // SAFETY: the child only makes system calls and exits.
        unsafe {
            let child = libc::fork();
            assert!(child >= 0);
            if child == 0 {
                let ok = pid() == libc::getpid() as u32 && tid() == libc::getpid() as u32;
                libc::_exit(if ok { 0 } else { 1 });
            }
            let mut status = 0;
            libc::waitpid(child, &mut status, 0);
            assert_eq!(
                libc::WEXITSTATUS(status),
                0,
                "the child saw its parent's ids"
            );
        }
        assert_eq!(pid(), kpid);
    }
}
