//! `cudnn-trace [OPTIONS] [--] PROGRAM [ARGS...]`: run a program with the shim
//! injected into it and every process it starts, wait for it, summarize.

use crate::analysis::findings::Severity;
use crate::analysis::{Diagnosis, ProcessTree};
use crate::args::RunArgs;
use crate::capture::{Capture, ChildStdio};
use crate::ldenv;
use crate::machine::pin::{self, PinInfo};
use crate::model::{self, signal_name, trace, LauncherRecord, TraceSet, LAUNCHER_FILE};
use crate::render::summary::{self, TextOptions};
use crate::render::{findings::findings_text, json, text::display_path};
use crate::report;
use crate::shim;
use crate::target;
use std::fs;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicI32, Ordering};

/// Exit status when cudnn-trace itself fails (as `env`, `nice`, `timeout`).
pub const EXIT_INTERNAL: i32 = 125;
/// `--fail-on LEVEL`: the program exited 0 but a finding reached LEVEL.
pub const EXIT_FINDINGS: i32 = 3;

/// Writes to stderr, ignoring errors (a closed or hung-up terminal must not
/// turn into a panic: the program's exit status matters more).
pub fn eprint(s: &str) {
    let _ = std::io::stderr().write_all(s.as_bytes());
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Local time of `ms` as (`YYYYmmdd-HHMMSS`, RFC 3339 with offset).
pub fn local_time(ms: u64) -> (String, String) {
    let secs = (ms / 1000) as libc::time_t;
    // SAFETY: zeroed tm is a valid out-parameter; localtime_r is thread-safe.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = !unsafe { libc::localtime_r(&secs, &mut tm) }.is_null();
    if !ok {
        return (format!("{secs}"), format!("{secs}"));
    }
    let (y, mo, d, h, mi, s) = (
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
    );
    let off = tm.tm_gmtoff / 60;
    let sign = if off < 0 { '-' } else { '+' };
    (
        format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}"),
        format!(
            "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:03}{sign}{:02}:{:02}",
            ms % 1000,
            off.abs() / 60,
            off.abs() % 60
        ),
    )
}

/// The output directory: created, absolute.
fn make_out_dir(
    requested: Option<&Path>,
    launcher_pid: u32,
    start_ms: u64,
) -> Result<PathBuf, String> {
    let dir = match requested {
        Some(d) => d.to_path_buf(),
        None => {
            let (stamp, _) = local_time(start_ms);
            Path::new(trace::DEFAULT_OUT).join(format!("{stamp}-{launcher_pid}"))
        }
    };
    fs::create_dir_all(&dir).map_err(|e| {
        format!(
            "cannot create the trace directory {}: {}",
            dir.display(),
            model::io_msg(&e)
        )
    })?;
    let abs =
        fs::canonicalize(&dir).map_err(|e| format!("{}: {}", dir.display(), model::io_msg(&e)))?;
    // An existing directory may still not take files (permissions, a
    // read-only mount): find out now, not once per traced process.
    let probe = abs.join(format!(".cudnn-trace-probe-{launcher_pid}"));
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map_err(|e| {
            format!(
                "cannot write in the trace directory {}: {}",
                dir.display(),
                model::io_msg(&e)
            )
        })?;
    let _ = fs::remove_file(&probe);
    if requested.is_some() && trace::looks_like_run(&abs) {
        eprint(&format!(
            "cudnn-trace: warning: {} already holds traces; this run's files are added to them\n",
            dir.display()
        ));
    }
    Ok(abs)
}

/// What launcher.json says about the pin (docs/pin.md).
fn pin_record(p: &PinInfo) -> model::PinRecord {
    model::PinRecord {
        dir: p.dir.to_string_lossy().into_owned(),
        mode: p.mode.as_str().to_string(),
        major: Some(p.major),
        version: p.version.clone(),
        cuda_build: p.cuda_build.and_then(|c| u32::try_from(c).ok()),
        max_device: p.max_device.and_then(|c| u32::try_from(c).ok()),
        files: p.files.clone(),
        warnings: p.warnings.clone(),
    }
}

/// Writes launcher.json atomically (temporary file, then rename).
fn write_record(dir: &Path, rec: &LauncherRecord) {
    let tmp = dir.join(format!(".{LAUNCHER_FILE}.{}.tmp", std::process::id()));
    let res = serde_json::to_vec_pretty(rec)
        .map_err(std::io::Error::other)
        .and_then(|mut v| {
            v.push(b'\n');
            fs::write(&tmp, v)
        })
        .and_then(|()| fs::rename(&tmp, dir.join(LAUNCHER_FILE)));
    if let Err(e) = res {
        let _ = fs::remove_file(&tmp);
        eprint(&format!(
            "cudnn-trace: warning: cannot write {}: {}\n",
            dir.join(LAUNCHER_FILE).display(),
            model::io_msg(&e)
        ));
    }
}

fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: buffer and its length.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return None;
    }
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

// ---------------------------------------------------------------------------
// Signals
//
// The program stays in our process group and keeps the terminal: it is the
// user's program, and the terminal must behave as without cudnn-trace.
// Signals therefore reach it in two ways, and the launcher must not double
// them:
//
// * Keys typed at the terminal (Ctrl-C: SIGINT, Ctrl-\: SIGQUIT) and a
//   terminal hang-up (SIGHUP) are sent by the kernel to the whole foreground
//   process group, so the program already received them. Forwarding them
//   would deliver each twice (a Python program would see a second
//   KeyboardInterrupt in the middle of its clean-up). Such signals come with
//   si_code == SI_KERNEL, and are not forwarded.
// * Signals sent with kill() to the launcher's pid only (`kill PID`,
//   `timeout`, a job scheduler, `docker stop` when the launcher is PID 1)
//   would otherwise never reach the program, so they are forwarded to it.
//   Exception: a signal sent by the program or one of its descendants (for
//   instance `kill 0` in a shell script, which signals the whole group) is
//   not forwarded: the sender's group, the program included, got it already.
//
// In every case the launcher itself does not die of these signals: it keeps
// waiting, so that it can still write launcher.json and the summary (as
// `system()` ignores SIGINT/SIGQUIT while waiting). Then it ends as the
// program did: the same exit status, or death by the same signal, with core
// dumps disabled first (the program made its own). A shell shows 128+N
// either way, but only a death by signal stops a shell loop on Ctrl-C and
// gives Python's subprocess the same `returncode` (-N) as without the
// launcher.
// A signal sent with kill() to the whole process group from outside the tree
// still reaches the program twice; that cannot be told apart from one sent to
// the launcher alone. Signals the launcher inherited as ignored (nohup, a
// background job of a non-interactive shell) stay ignored, for the program
// too.
// ---------------------------------------------------------------------------

/// Every signal whose default action ends a process and that someone else
/// sends (not the synchronous faults): left alone, any of these would end the
/// launcher and orphan the program (Slurm's `--signal=USR1@90`, for one,
/// signals every process of a job step).
const FORWARDED: [i32; 10] = [
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGPWR,
];

static PIPE_W: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // Async-signal-safe: one write(2) of a fixed record; errno preserved.
    // SAFETY: the kernel passes a valid siginfo_t (SA_SIGINFO); errno
    // location is valid for this thread.
    unsafe {
        let errno = *libc::__errno_location();
        let (code, pid) = if info.is_null() {
            (0, 0)
        } else {
            ((*info).si_code, (*info).si_pid())
        };
        let rec: [i32; 3] = [sig, code, pid];
        let fd = PIPE_W.load(Ordering::Relaxed);
        if fd >= 0 {
            libc::write(fd, rec.as_ptr().cast(), std::mem::size_of_val(&rec));
        }
        *libc::__errno_location() = errno;
    }
}

struct Signals {
    read_fd: i32,
}

impl Signals {
    /// Installs the handlers (not for signals inherited as ignored) and a
    /// SIGCHLD handler that wakes the wait loop.
    fn install() -> std::io::Result<Signals> {
        let mut fds = [0i32; 2];
        // SAFETY: fds is a valid array of two ints.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        PIPE_W.store(fds[1], Ordering::Relaxed);
        for sig in FORWARDED.iter().copied().chain([libc::SIGCHLD]) {
            // SAFETY: querying and setting dispositions with valid sigaction structs.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                // SIGCHLD is always caught: ignoring it would make the
                // kernel reap the program before we could read its status.
                if sig != libc::SIGCHLD
                    && libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction == libc::SIG_IGN
                {
                    continue;
                }
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as *const () as usize;
                sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
                if sig == libc::SIGCHLD {
                    sa.sa_flags |= libc::SA_NOCLDSTOP;
                }
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
        Ok(Signals { read_fd: fds[0] })
    }

    /// Waits for a signal record (or a SIGCHLD wake-up).
    fn wait(&self) -> Vec<[i32; 3]> {
        let mut pfd = libc::pollfd {
            fd: self.read_fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd. EINTR just returns early.
        unsafe { libc::poll(&mut pfd, 1, 1000) };
        let mut out = Vec::new();
        let mut buf = [0i32; 3 * 16];
        loop {
            // SAFETY: reading into a buffer we own from our non-blocking pipe.
            let n = unsafe {
                libc::read(
                    self.read_fd,
                    buf.as_mut_ptr().cast(),
                    std::mem::size_of_val(&buf),
                )
            };
            if n <= 0 {
                break;
            }
            let recs = n as usize / std::mem::size_of::<[i32; 3]>();
            out.extend(buf.chunks_exact(3).take(recs).map(|c| [c[0], c[1], c[2]]));
        }
        out
    }
}

/// Whether `pid` is `child` or one of its descendants (walks /proc parents).
fn in_tree(pid: i32, child: i32) -> bool {
    let me = std::process::id() as i32;
    let mut cur = pid;
    for _ in 0..256 {
        if cur == child {
            return true;
        }
        if cur <= 1 || cur == me {
            return false;
        }
        let Ok(stat) = fs::read_to_string(format!("/proc/{cur}/stat")) else {
            return false;
        };
        // "pid (comm) state ppid …": comm may hold spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            return false;
        };
        match after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            Some(ppid) => cur = ppid,
            None => return false,
        }
    }
    false
}

/// Whether a signal the launcher received must be passed on to the program
/// (see the comment above).
fn should_forward(code: i32, sender: i32, child: i32) -> bool {
    if code == libc::SI_KERNEL {
        // From the terminal to its foreground group: the program got it too,
        // unless it moved to a process group of its own (setpgid/setsid),
        // which without the launcher would have changed nothing for it.
        // SAFETY: plain queries.
        let group = unsafe { libc::getpgid(child) };
        return group >= 0 && group != unsafe { libc::getpgrp() };
    }
    // SI_USER (kill), SI_QUEUE (sigqueue), SI_TKILL (tgkill): a process sent it.
    if code <= 0 && sender > 0 && in_tree(sender, child) {
        return false;
    }
    true
}

/// How the program ended.
enum Ended {
    Exited(i32),
    Signaled { sig: i32, core: bool },
}

fn wait_child(child: i32, signals: &Signals) -> Ended {
    loop {
        // Reap every finished child (orphans are ours when we are PID 1).
        loop {
            let mut status = 0;
            // SAFETY: valid out pointer.
            let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if r == child {
                if libc::WIFEXITED(status) {
                    return Ended::Exited(libc::WEXITSTATUS(status));
                }
                if libc::WIFSIGNALED(status) {
                    return Ended::Signaled {
                        sig: libc::WTERMSIG(status),
                        core: libc::WCOREDUMP(status),
                    };
                }
                continue;
            }
            if r <= 0 {
                if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD) {
                    // Someone else reaped it (should not happen): unknown status.
                    return Ended::Exited(EXIT_INTERNAL);
                }
                break;
            }
        }
        for [sig, code, sender] in signals.wait() {
            if sig != libc::SIGCHLD && should_forward(code, sender, child) {
                // SAFETY: kill with a valid pid and signal number.
                unsafe { libc::kill(child, sig) };
            }
        }
    }
}

fn install_signals() -> Option<Signals> {
    match Signals::install() {
        Ok(s) => Some(s),
        Err(e) => {
            eprint(&format!(
                "cudnn-trace: warning: cannot set up signal handling: {e}\n"
            ));
            None
        }
    }
}

/// Starts the program (`file`, found from `args.program`) with the traced
/// environment `env`, or with the launcher's own environment when None, and
/// the stdio of `stdio` (capture.rs).
/// Err: (exit status, message) when it cannot be started.
fn spawn(
    args: &RunArgs,
    file: &Path,
    env: Option<&ldenv::ProgramEnv>,
    stdio: &ChildStdio,
) -> Result<std::process::Child, (i32, String)> {
    // Put in place after fork with dup2, so that no copy stays in a
    // Command: the relay sees the end of the stream only once the
    // launcher has closed its own.
    let err_fd = stdio.stderr.as_ref().map(|f| f.as_raw_fd());
    let out_fd = stdio.stdout.as_ref().map(|f| f.as_raw_fd());
    let close_stderr = stdio.close_stderr;
    let build = |file: &Path, shell: bool| {
        let mut cmd = if shell {
            // execvp runs a file the kernel cannot execute with /bin/sh.
            let mut c = Command::new("/bin/sh");
            c.arg0(&args.program).arg(file);
            c
        } else {
            let mut c = Command::new(file);
            c.arg0(&args.program);
            c
        };
        cmd.args(&args.args);
        let launcher = std::process::id() as libc::pid_t;
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                // If the launcher is killed outright (SIGKILL from a timeout
                // or a supervisor), the program must not live on orphaned,
                // holding GPUs: it goes with it, as if it had been the one
                // killed.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != launcher {
                    libc::_exit(128 + libc::SIGKILL);
                }
                // dup2 clears close-on-exec on the copy.
                for (fd, target) in [(out_fd, 1), (err_fd, 2)] {
                    if let Some(fd) = fd {
                        if libc::dup2(fd, target) < 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                    }
                }
                if close_stderr {
                    libc::close(2);
                }
                Ok(())
            });
        }
        if let Some(env) = env {
            for (k, v) in &env.set {
                cmd.env(k, v);
            }
            for k in &env.remove {
                cmd.env_remove(k);
            }
        }
        cmd
    };
    let is_elf = fs::File::open(file)
        .and_then(|mut f| {
            let mut magic = [0u8; 4];
            std::io::Read::read_exact(&mut f, &mut magic).map(|_| magic == *b"\x7fELF")
        })
        .unwrap_or(false);
    let spawned = match build(file, false).spawn() {
        // Like execvp, hand a file the kernel cannot execute to /bin/sh,
        // but not an ELF file (another architecture): that is "cannot
        // execute" (126), as in bash, not a shell script.
        Err(e) if e.raw_os_error() == Some(libc::ENOEXEC) && !is_elf => build(file, true).spawn(),
        other => other,
    };
    spawned.map_err(|e| match e.raw_os_error() {
        // The file exists (it was checked), so ENOENT means its
        // interpreter (#! line or ELF PT_INTERP) is missing.
        Some(libc::ENOENT) => (
            127,
            format!(
                "{}: cannot execute: its interpreter or loader is missing ({})",
                file.display(),
                model::io_msg(&e)
            ),
        ),
        _ => (
            126,
            format!("{}: cannot execute: {}", file.display(), model::io_msg(&e)),
        ),
    })
}

/// Waits for the program, forwarding signals when `signals` is set up.
fn wait_program(child_pid: i32, signals: Option<&Signals>) -> Ended {
    match signals {
        Some(s) => wait_child(child_pid, s),
        None => {
            let mut status = 0;
            // SAFETY: valid out pointer.
            while unsafe { libc::waitpid(child_pid, &mut status, 0) } < 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
            {}
            if libc::WIFSIGNALED(status) {
                Ended::Signaled {
                    sig: libc::WTERMSIG(status),
                    core: libc::WCOREDUMP(status),
                }
            } else {
                Ended::Exited(libc::WEXITSTATUS(status))
            }
        }
    }
}

/// Runs the program without a trace (the trace directory or the shim could
/// not be made), with the same exit status and signal handling as a traced
/// run. `env`: the pin's variables when the run is pinned, else None (the
/// launcher's own environment).
fn run_untraced(args: &RunArgs, file: &Path, env: Option<&ldenv::ProgramEnv>) -> i32 {
    let signals = install_signals();
    let child = match spawn(args, file, env, &ChildStdio::passthrough()) {
        Ok(c) => c,
        Err((code, msg)) => {
            eprint(&format!("cudnn-trace: {msg}\n"));
            return code;
        }
    };
    let child_pid = child.id() as i32;
    // The Child handle is not used for waiting: wait_child reaps by pid.
    drop(child);
    match wait_program(child_pid, signals.as_ref()) {
        Ended::Exited(c) => c,
        Ended::Signaled { sig, .. } => {
            die_of(sig);
            128 + sig
        }
    }
}

/// Ends the launcher with the signal that ended the program. Returns only if
/// that did not end it (the caller then exits 128+N).
fn die_of(sig: i32) {
    // SAFETY: plain libc calls on the launcher's own process state.
    unsafe {
        let mut cur: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_CORE, &mut cur) == 0 {
            libc::setrlimit(
                libc::RLIMIT_CORE,
                &libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: cur.rlim_max,
                },
            );
        }
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
    }
}

/// Validates `--pin DIR` (printing its warnings); Err: the exit status
/// when it is refused, after the message.
fn check_pin(args: &RunArgs) -> Result<Option<PinInfo>, i32> {
    let Some(dir) = &args.pin else {
        return Ok(None);
    };
    match pin::validate(dir, args.pin_mode) {
        Ok(info) => {
            for w in &info.warnings {
                eprint(&format!("cudnn-trace: warning: {w}\n"));
            }
            Ok(Some(info))
        }
        Err(refusal) => {
            eprint(&format!("cudnn-trace: {refusal}\n"));
            Err(EXIT_INTERNAL)
        }
    }
}

/// Runs the launcher; returns the exit status.
pub fn run(args: RunArgs) -> i32 {
    let start_ms = now_ms();
    let launcher_pid = std::process::id();
    // The pin is checked before anything else happens: a refused directory
    // leaves no trace directory and starts nothing.
    let pin = match check_pin(&args) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let path_var = std::env::var_os("PATH");
    let resolved = match target::resolve(&args.program, path_var.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            eprint(&format!("cudnn-trace: {}\n", e.message));
            return e.code;
        }
    };
    // A setuid/setgid program runs in secure-execution mode, where the
    // loader ignores LD_AUDIT: it could load any cuDNN it likes. A strict pin
    // exists to prevent exactly that, so it refuses rather than run it
    // unpinned. (A static program loads no shared cuDNN itself, and the
    // programs it starts are pinned, so it only gets the warning below.)
    if let (Some(p), Some(why)) = (&pin, target::secure_exec(&resolved)) {
        if p.mode == pin::PinMode::Strict {
            eprint(&format!(
                "cudnn-trace: refusing to run {} under a strict cuDNN pin: {why}, so the loader \
                 ignores LD_AUDIT and the pin could not apply (--pin-mode warn runs it unpinned)\n",
                resolved.display()
            ));
            return EXIT_INTERNAL;
        }
    }
    let shim_path = match shim::locate() {
        Ok(p) => p,
        // The pin is done by the shim: without it, a pinned program would
        // run unpinned, which is what the pin exists to prevent.
        Err(e) if pin.is_some() => {
            eprint(&format!(
                "cudnn-trace: {e}; the cuDNN pin needs the shim, so {} is not run\n",
                args.program.to_string_lossy()
            ));
            return EXIT_INTERNAL;
        }
        // Nowhere safe to put the shim: the program still runs, untraced.
        Err(e) if e.run_untraced() => {
            eprint(&format!(
                "cudnn-trace: {e}; running {} untraced\n",
                args.program.to_string_lossy()
            ));
            return run_untraced(&args, &resolved, None);
        }
        Err(e) => {
            eprint(&format!("cudnn-trace: {e}\n"));
            return EXIT_INTERNAL;
        }
    };
    let out_dir = match make_out_dir(args.out.as_deref(), launcher_pid, start_ms) {
        Ok(d) => d,
        Err(e) => {
            // The program matters more than its trace: run it as it is.
            // But the pin is a safety feature and tracing is not: it needs
            // only the shim's audit role and no trace directory, so the
            // program runs pinned (refusing would stop a production job
            // over a place to write logs; running unpinned would load the
            // cuDNN the user said must not be loaded).
            let Some(p) = &pin else {
                eprint(&format!(
                    "cudnn-trace: {e}; running {} untraced\n",
                    args.program.to_string_lossy()
                ));
                return run_untraced(&args, &resolved, None);
            };
            eprint(&format!(
                "cudnn-trace: {e}; running {} untraced, still pinned to {}\n",
                args.program.to_string_lossy(),
                p.dir.display()
            ));
            let env = ldenv::pin_only_env(&shim_path, &p.dir, p.mode, |k| std::env::var_os(k));
            return run_untraced(&args, &resolved, Some(&env));
        }
    };
    let mut warnings = Vec::new();
    if let Some(w) = target::untraceable(&resolved, target::shim_arch(&shim_path)) {
        // The loader that ignores the tracer ignores the pin too; its
        // children (a static busybox shell starting python, say) are still
        // pinned, so the program runs, as it does traced.
        let also = if pin.is_some() {
            " (the cuDNN pin does not apply to it either, only to the dynamically linked programs it starts)"
        } else {
            ""
        };
        eprint(&format!(
            "cudnn-trace: warning: {w}; running it anyway{also}\n"
        ));
        warnings.push(w);
    }

    let mut argv = vec![args.program.to_string_lossy().into_owned()];
    argv.extend(args.args.iter().map(|a| a.to_string_lossy().into_owned()));
    let mut rec = LauncherRecord {
        launcher_version: env!("CARGO_PKG_VERSION").to_string(),
        program: args.program.to_string_lossy().into_owned(),
        command: Some(resolved.display().to_string()),
        argv,
        cwd: std::env::current_dir()
            .ok()
            .map(|p| p.display().to_string()),
        out_dir: out_dir.display().to_string(),
        mode: if args.all { "all" } else { "cuda" }.to_string(),
        shim: Some(shim_path.display().to_string()),
        hostname: hostname(),
        launcher_pid,
        start_wall_ms: start_ms,
        start: local_time(start_ms).1,
        warnings,
        pin: pin.as_ref().map(pin_record),
        ..Default::default()
    };

    let mut env = ldenv::program_env(&shim_path, &out_dir, args.all, |k| std::env::var_os(k));
    if let Some(p) = &pin {
        env.add_pin(&p.dir, p.mode);
    }
    let signals = install_signals();
    // Set up last, right before the program starts: the launcher's own
    // messages before this point are not the program's.
    let mut capture = Capture::begin(&out_dir, !args.no_capture_stderr);
    rec.stderr = Some(capture.record());
    let child = match spawn(&args, &resolved, Some(&env), capture.child_stdio()) {
        Ok(c) => c,
        Err((code, msg)) => {
            rec.stderr = Some(capture.finish());
            eprint(&format!("cudnn-trace: {msg}\n"));
            let end = now_ms();
            rec.error = Some(msg);
            rec.end_wall_ms = Some(end);
            rec.end = Some(local_time(end).1);
            rec.status = Some(code);
            write_record(&out_dir, &rec);
            return code;
        }
    };
    let child_pid = child.id() as i32;
    // The Child handle is not used for waiting: wait_child reaps by pid.
    drop(child);
    capture.program_started();
    rec.pid = Some(child_pid as u32);
    write_record(&out_dir, &rec);

    let ended = wait_program(child_pid, signals.as_ref());
    // Everything the program wrote reaches the real stderr before the
    // summary (and before the launcher ends by the program's signal).
    rec.stderr = Some(capture.finish());
    let end = now_ms();
    let status = match ended {
        Ended::Exited(c) => {
            rec.exit_code = Some(c);
            c
        }
        Ended::Signaled { sig, core } => {
            rec.signal = Some(sig);
            rec.signal_name = signal_name(sig).map(str::to_string);
            rec.core_dumped = Some(core);
            128 + sig
        }
    };
    rec.end_wall_ms = Some(end);
    rec.end = Some(local_time(end).1);
    rec.status = Some(status);
    write_record(&out_dir, &rec);

    let mut status = status;
    if !args.quiet || args.json_summary.is_some() || args.fail_on.is_some() {
        let set = model::read_paths(std::slice::from_ref(&out_dir));
        let a = ProcessTree::new(&set);
        let stderr = model::captured_stderr(std::slice::from_ref(&out_dir));
        let d = report::diagnose(&set, stderr.as_deref());
        let tripped = d.trips(args.fail_on);
        let count = |s: Severity| d.all().filter(|f| f.severity == s).count();
        rec.findings = Some(model::FindingsRecord {
            error: count(Severity::Error),
            warning: count(Severity::Warning),
            info: count(Severity::Info),
            fail_on: args.fail_on.map(|l| l.as_str().to_string()),
            tripped,
        });
        // The gate never hides the program's own failure: it only turns a
        // clean exit into EXIT_FINDINGS.
        if tripped && status == 0 && rec.signal.is_none() {
            status = EXIT_FINDINGS;
            rec.status = Some(status);
        }
        write_record(&out_dir, &rec);
        if !args.quiet {
            report::print_problems(&set.problems);
            let opts = TextOptions {
                all: false,
                location: vec![display_path(&out_dir)],
                prefix: None,
            };
            eprint(&format!(
                "\n{}{}",
                summary::render(&set, &a, &opts),
                findings_text(&d)
            ));
        }
        if let Some(dest) = &args.json_summary {
            write_json_summary(&set, &a, dest, args.all, &d);
        }
    }
    if let Some(sig) = rec.signal {
        die_of(sig);
    }
    status
}

fn write_json_summary(set: &TraceSet, a: &ProcessTree, dest: &Path, all: bool, d: &Diagnosis) {
    let doc = json::document(set, a, all, d);
    let text = match serde_json::to_string_pretty(&doc) {
        Ok(t) => t + "\n",
        Err(e) => {
            eprint(&format!(
                "cudnn-trace: cannot write the JSON summary: {e}\n"
            ));
            return;
        }
    };
    let res = if dest == Path::new("-") {
        std::io::stdout()
            .write_all(text.as_bytes())
            .and_then(|()| std::io::stdout().flush())
    } else {
        fs::write(dest, text)
    };
    if let Err(e) = res {
        eprint(&format!(
            "cudnn-trace: cannot write the JSON summary to {}: {}\n",
            dest.display(),
            model::io_msg(&e)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_formats() {
        let (stamp, rfc) = local_time(1_763_700_000_123);
        assert_eq!(stamp.len(), 15);
        assert_eq!(&stamp[8..9], "-");
        assert!(rfc.contains(".123"), "{rfc}");
        assert_eq!(rfc.len(), "2025-11-21T04:40:00.123+00:00".len());
    }

    #[test]
    fn kernel_signals_are_not_forwarded() {
        use std::os::unix::process::CommandExt;
        // From the terminal to our group: a program in our group got it too;
        // one that moved to a group of its own did not.
        let mut same = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let mut own = std::process::Command::new("sleep")
            .arg("5")
            .process_group(0)
            .spawn()
            .unwrap();
        assert!(!should_forward(libc::SI_KERNEL, 0, same.id() as i32));
        assert!(should_forward(libc::SI_KERNEL, 0, own.id() as i32));
        for c in [&mut same, &mut own] {
            let _ = c.kill();
            let _ = c.wait();
        }
        // Sent by a process outside the tree (here: a pid that is not ours).
        assert!(should_forward(libc::SI_USER, 1, 12345));
        // Sent by the program itself.
        assert!(!should_forward(libc::SI_USER, 12345, 12345));
        // Sent by a descendant of the program: a shell (the "program") and
        // the sleep it started in the background.
        let mut sh = std::process::Command::new("/bin/sh")
            .args(["-c", "sleep 5 & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(sh.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        let grandchild: i32 = line.trim().parse().unwrap();
        assert!(in_tree(grandchild, sh.id() as i32));
        assert!(!should_forward(libc::SI_USER, grandchild, sh.id() as i32));
        assert!(!in_tree(sh.id() as i32, grandchild));
        // SAFETY: plain kill of processes we started.
        unsafe { libc::kill(grandchild, libc::SIGKILL) };
        let _ = sh.wait();
    }
}
