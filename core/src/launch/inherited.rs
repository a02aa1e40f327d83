//! The signal state the launcher inherited, which the program must inherit
//! in turn: noted before Rust's runtime changes it (the runtime ignores
//! SIGPIPE for the launcher itself), and handed to the program by
//! [`super::spawn`] and the terminal session leader ([`super::session`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The signal state the launcher inherited, noted before Rust's runtime
/// changed it ([`note`]): SIGPIPE ignored, and the blocked
/// signals (bit N-1 for signal N), valid once `INHERITED_NOTED` is set.
static SIGPIPE_INHERITED_IGNORED: AtomicBool = AtomicBool::new(false);
static INHERITED_BLOCKED: AtomicU64 = AtomicU64::new(0);
static INHERITED_NOTED: AtomicBool = AtomicBool::new(false);

/// Notes the signal state the program must inherit from the launcher:
/// whether SIGPIPE was ignored (Python's `subprocess` with
/// `restore_signals=False`, some CI runners and supervisors start programs
/// so) and which signals were blocked. Rust's runtime ignores SIGPIPE for
/// itself before `main`; reset to the default for every program, it would
/// make a program that inherited it ignored die of a broken pipe where it
/// would have seen EPIPE. The launcher's binary calls this from a
/// constructor, which runs before the runtime; if it is never called, the
/// program gets SIGPIPE as the default and the launcher's mask.
pub fn note() {
    // SAFETY: querying a disposition and the mask into zeroed structs.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        let ignored = libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN;
        let mut set: libc::sigset_t = std::mem::zeroed();
        if libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut set) != 0 {
            return;
        }
        let bits = (1..=64).fold(0u64, |acc, sig| {
            acc | (u64::from(libc::sigismember(&set, sig) == 1) << (sig - 1))
        });
        SIGPIPE_INHERITED_IGNORED.store(ignored, Ordering::Relaxed);
        INHERITED_BLOCKED.store(bits, Ordering::Relaxed);
        INHERITED_NOTED.store(true, Ordering::Release);
    }
}

/// Whether the program starts with SIGPIPE ignored: when the launcher
/// inherited it so ([`note`]).
pub fn sigpipe_inherited_ignored() -> bool {
    SIGPIPE_INHERITED_IGNORED.load(Ordering::Relaxed)
}

/// The signal mask the launcher inherited, for the program; None when it
/// was not noted ([`note`]). Made before a fork: the child only
/// installs it.
pub fn inherited_mask() -> Option<libc::sigset_t> {
    if !INHERITED_NOTED.load(Ordering::Acquire) {
        return None;
    }
    let bits = INHERITED_BLOCKED.load(Ordering::Relaxed);
    // SAFETY: filling a zeroed sigset_t with sigemptyset/sigaddset.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in (1..=64).filter(|s| bits >> (s - 1) & 1 == 1) {
            libc::sigaddset(&mut set, sig);
        }
        Some(set)
    }
}
