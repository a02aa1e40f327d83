//! The signal state the launcher inherited, which the program must inherit
//! in turn: noted before the launcher changes it for itself (it ignores
//! SIGPIPE, [`super::entry`]), and handed to the program by
//! [`super::spawn`] and the terminal session leader ([`super::session`]).
//!
//! Other signals the launcher inherited as ignored it leaves ignored
//! ([`super::signals`]), so the program inherits them as they are. Two it
//! cannot leave alone: SIGPIPE ([`super::entry`]) and SIGCHLD (the launcher
//! must see the program end). A program started with SIGCHLD ignored has
//! its children reaped by the kernel, and one started with SIGPIPE ignored
//! gets EPIPE instead of dying of a broken pipe (Python's `subprocess` with
//! `restore_signals=False`, some CI runners and supervisors start programs
//! so); under the launcher they must be the same.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Signals inherited as ignored, of those the launcher changes for itself
/// (bit N-1 for signal N), and the blocked signals; valid once `NOTED` is
/// set.
static IGNORED: AtomicU64 = AtomicU64::new(0);
static BLOCKED: AtomicU64 = AtomicU64::new(0);
static NOTED: AtomicBool = AtomicBool::new(false);

/// The signals whose inherited disposition the launcher changes for itself.
const CHANGED: [i32; 2] = [libc::SIGPIPE, libc::SIGCHLD];

/// Notes the signal state the program must inherit from the launcher. The
/// launcher's binary calls it first thing ([`super::entry::start`]); if it
/// is never called (the library without that binary), the
/// program gets SIGPIPE and SIGCHLD as the default, and the signal mask of
/// the thread that starts it (on a terminal of its own: none blocked).
pub fn note() {
    // SAFETY: querying the mask into a zeroed struct.
    unsafe {
        let ignored = CHANGED
            .into_iter()
            .filter(|&sig| ignored_now(sig))
            .fold(0u64, |acc, sig| acc | bit(sig));
        let mut set: libc::sigset_t = std::mem::zeroed();
        if libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut set) != 0 {
            return;
        }
        let blocked = (1..=64)
            .filter(|&sig| libc::sigismember(&set, sig) == 1)
            .fold(0u64, |acc, sig| acc | bit(sig));
        IGNORED.store(ignored, Ordering::Relaxed);
        BLOCKED.store(blocked, Ordering::Relaxed);
        NOTED.store(true, Ordering::Release);
    }
}

/// Whether `sig` is ignored now (its disposition is SIG_IGN).
pub fn ignored_now(sig: i32) -> bool {
    // SAFETY: querying a disposition into a zeroed struct.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

fn bit(sig: i32) -> u64 {
    1u64 << (sig - 1)
}

/// The disposition the program starts with for `sig`, one of the signals
/// the launcher changes for itself (SIGPIPE, SIGCHLD): ignored when the
/// launcher inherited it so ([`note`]), else the default. Async-signal-safe.
pub fn disposition(sig: i32) -> libc::sighandler_t {
    if NOTED.load(Ordering::Acquire) && IGNORED.load(Ordering::Relaxed) & bit(sig) != 0 {
        libc::SIG_IGN
    } else {
        libc::SIG_DFL
    }
}

/// The signals whose disposition [`disposition`] gives.
pub fn changed() -> [i32; 2] {
    CHANGED
}

/// The signal mask the launcher inherited, for the program; None when it
/// was not noted ([`note`]). Made before a fork: the child only
/// installs it.
pub fn inherited_mask() -> Option<libc::sigset_t> {
    if !NOTED.load(Ordering::Acquire) {
        return None;
    }
    let bits = BLOCKED.load(Ordering::Relaxed);
    // SAFETY: filling a zeroed sigset_t with sigemptyset/sigaddset.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in (1..=64).filter(|&s| bits & bit(s) != 0) {
            libc::sigaddset(&mut set, sig);
        }
        Some(set)
    }
}
