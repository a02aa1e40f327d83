//! What the launcher's binary does first, in place of Rust's runtime start.
//!
//! The binary has no Rust `main` (`#![no_main]`, `cli/src/main.rs`): the C
//! library calls its C `main` directly. Rust's runtime start would, before
//! `main`, find the main thread's stack bounds (glibc reads and parses
//! `/proc/self/maps` for them), map an alternate signal stack with a guard
//! page, install SIGSEGV and SIGBUS handlers to name a stack overflow, and
//! undo some of that at exit: 19 system calls, and 0.08 to 0.12 ms of every
//! traced run on the 2-core development VM (docs/benchmarks.md, session 14).
//! Of what it does, the launcher needs two things, done here in two system
//! calls:
//!
//! - descriptors 0, 1 and 2 open: a launcher started with one of them
//!   closed would otherwise open `launcher.json` or a pipe on it, and its
//!   own messages would land there;
//! - SIGPIPE ignored: a write to a closed pipe (the summary to `| head`)
//!   fails with EPIPE instead of killing the launcher before it has
//!   recorded how the program ended. The disposition the launcher
//!   inherited is noted first ([`super::inherited::note`]), for the
//!   program.
//!
//! A stack overflow in the launcher is now a plain SIGSEGV, without Rust's
//! one-line message; nothing in it recurses without bound.

/// Prepares the process as described above. Call once, first thing in
/// `main`, before any file is opened.
pub fn start() {
    super::inherited::note();
    open_standard_fds();
    // SAFETY: setting a disposition; no handler of ours is involved.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// Opens `/dev/null` on whichever of descriptors 0, 1 and 2 is closed (as
/// Rust's runtime does): one `poll` when all are open.
fn open_standard_fds() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: polling three descriptors for nothing, without waiting.
    let polled = unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) } >= 0;
    for p in fds {
        let closed = if polled {
            p.revents & libc::POLLNVAL != 0
        } else {
            // SAFETY: F_GETFD only queries the descriptor table.
            let flags = unsafe { libc::fcntl(p.fd, libc::F_GETFD) };
            flags == -1
        };
        if closed {
            reopen_on_dev_null(p.fd);
        }
    }
}

/// Opens `/dev/null` so that it gets `fd`, the lowest closed descriptor
/// (0, 1 and 2 are checked in order). Where even that fails, it gives up
/// quietly: Rust's runtime aborted there, the launcher would rather run the
/// program.
fn reopen_on_dev_null(fd: i32) {
    // SAFETY: a constant path; the descriptor is kept for the process's life.
    let got = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
    if got >= 0 && got != fd {
        // SAFETY: moving our own new descriptor onto the closed one.
        unsafe {
            libc::dup2(got, fd);
            libc::close(got);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_opens_closed_standard_descriptors_on_dev_null_and_ignores_sigpipe() {
        // In a child, so that the test process keeps its own descriptors.
        // SAFETY: the child only makes system calls and exits.
        unsafe {
            let child = libc::fork();
            assert!(child >= 0);
            if child == 0 {
                libc::close(0);
                libc::close(2);
                // As a shell starts the launcher; the test harness ignores it.
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                start();
                let mut st: libc::stat = std::mem::zeroed();
                let null = libc::fstat(0, &mut st) == 0
                    && st.st_mode & libc::S_IFMT == libc::S_IFCHR
                    && st.st_rdev == libc::makedev(1, 3)
                    && libc::fstat(2, &mut st) == 0
                    && st.st_rdev == libc::makedev(1, 3);
                let mut old: libc::sigaction = std::mem::zeroed();
                libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut old);
                let ignored = old.sa_sigaction == libc::SIG_IGN;
                libc::_exit(if null && ignored { 0 } else { 1 });
            }
            let mut status = 0;
            libc::waitpid(child, &mut status, 0);
            assert_eq!(libc::WEXITSTATUS(status), 0);
        }
    }
}
