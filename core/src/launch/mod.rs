//! The launcher: runs a program with the shim injected into it and every
//! process it starts, and records the run.
//!
//! * [`run`]: the whole sequence (the pin checked, the program found, the
//!   shim extracted, the trace directory made, the program started, waited
//!   for and recorded in `launcher.json`), each refusal or fallback with one
//!   message; what happens after the program ended (the summary, the
//!   findings gate) is the `run` command's;
//! * [`entry`]: what the binary does first, in place of Rust's runtime
//!   start;
//! * [`target`]: finding the program as `execvp` does, and whether the
//!   loader will take the shim into it (static, setuid, another machine);
//! * [`mod@env`]: the `LD_PRELOAD`/`LD_AUDIT` and `CUDNN_TRACE_*` the program
//!   gets, composed with the user's own;
//! * [`shim`]: the embedded shim, extracted to a safe place or installed;
//! * [`capture`]: the copy of the program's stderr (`stderr.txt`), and
//!   what the program gets on a terminal; [`pty`], [`terminal`],
//!   [`session`], [`exec`]: a terminal session of its own when the user's
//!   terminal is the launcher's stdin, stdout and stderr;
//! * [`mod@spawn`], [`signals`], [`inherited`]: starting the program with
//!   the signal state the launcher inherited, passing signals on, and
//!   ending the way it ended; [`outliving`]: the processes of its tree that
//!   are still running when it ends; [`record`]: the trace directory and
//!   `launcher.json`.

pub mod capture;
pub mod entry;
pub mod env;
pub mod exec;
pub mod inherited;
pub mod outliving;
pub mod pty;
pub mod record;
pub mod session;
pub mod shim;
pub mod signals;
pub mod spawn;
pub mod target;
pub mod terminal;

use crate::machine::pin::{self, PinInfo, PinMode};
use crate::model::{signal_name, LauncherRecord};
use capture::{Capture, ChildStdio};
use env::ProgramEnv;
pub use record::Records;
use record::{local_time, make_out_dir, now_ms, pin_record};
use session::Session;
use signals::{install_signals, wait_program, Ended, Program};
use spawn::{spawn, Started};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use signals::die_of;

/// Exit status when cudnn-trace itself fails (as `env`, `nice`, `timeout`).
pub const EXIT_INTERNAL: i32 = 125;

/// Writes to stderr, ignoring errors (a closed or hung-up terminal must not
/// turn into a panic: the program's exit status matters more).
pub fn eprint(s: &str) {
    let _ = std::io::stderr().write_all(s.as_bytes());
}

/// What to run, and how.
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// The trace directory (`--out`); default: a new run directory under
    /// `./cudnn-trace-out`.
    pub out: Option<PathBuf>,
    /// Record every library, not only the CUDA family (`--all`).
    pub all: bool,
    /// Keep no copy of the program's stderr (`--no-capture-stderr`).
    pub no_capture_stderr: bool,
    /// The cuDNN directory to pin to (`--pin`), as typed.
    pub pin: Option<PathBuf>,
    pub pin_mode: PinMode,
    /// The program as typed (`argv[0]` of the child) and its arguments.
    pub program: OsString,
    pub args: Vec<OsString>,
    /// The caller's work that needs nothing of the run, done while the
    /// program starts (on a machine of several cores, beside it: the
    /// launcher would only wait): after the program was started and the
    /// record of the start written, before the wait.
    pub meanwhile: Option<fn()>,
}

/// How a launch ended.
#[derive(Debug)]
pub enum Outcome {
    /// Nothing was traced: the launcher refused (a bad pin directory, a
    /// program not found, no shim), the program ran untraced, or it could
    /// not be started. The exit status to end with.
    Done(i32),
    /// The program ran traced and has ended.
    Traced(Box<Traced>),
}

/// A traced run that has ended.
#[derive(Debug)]
pub struct Traced {
    /// The trace directory, absolute.
    pub out_dir: PathBuf,
    /// `launcher.json` as written.
    pub record: LauncherRecord,
    /// Its writer, for the version the caller may add (the summary's
    /// counts).
    pub records: Records,
    /// The launcher's exit status: the program's, or 128+N when it died
    /// of signal N (then end with [`die_of`] once done).
    pub status: i32,
}

/// Runs the program as `opts` says. Messages about refusals and fallbacks
/// go to stderr here; the program's own output is untouched.
pub fn run(opts: &Options) -> Outcome {
    let start_ms = now_ms();
    let launcher_pid = std::process::id();
    match prepare(opts, launcher_pid, start_ms) {
        Ok(p) => {
            let shim = p.shim.clone();
            let out = run_traced(opts, p, launcher_pid, start_ms);
            shim::release(&shim);
            out
        }
        Err(code) => Outcome::Done(code),
    }
}

/// What a traced run needs, once every check has passed.
struct Prepared {
    pin: Option<PinInfo>,
    /// The program's file, found as `execvp` would.
    resolved: PathBuf,
    shim: PathBuf,
    out_dir: PathBuf,
    records: Records,
    /// Why (part of) the run cannot be traced, already printed.
    warnings: Vec<String>,
}

/// The checks before the program starts, in order. Err: the exit status,
/// when the launcher refused or ran the program untraced instead.
fn prepare(opts: &Options, launcher_pid: u32, start_ms: u64) -> Result<Prepared, i32> {
    // The pin is checked before anything else happens: a refused directory
    // leaves no trace directory and starts nothing.
    let pin = check_pin(opts)?;
    let resolved = resolve(opts, pin.as_ref())?;
    let shim = locate_shim(opts, &resolved, pin.is_some())?;
    let (out_dir, records) = match make_out_dir(opts.out.as_deref(), launcher_pid, start_ms) {
        Ok(d) => d,
        Err(e) => {
            return Err(run_without_trace_dir(
                opts,
                &resolved,
                &shim,
                pin.as_ref(),
                &e,
            ))
        }
    };
    let mut warnings = Vec::new();
    if let Some(w) = target::untraceable(&resolved, target::shim_arch(&shim)) {
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
    Ok(Prepared {
        pin,
        resolved,
        shim,
        out_dir,
        records,
        warnings,
    })
}

/// Validates `--pin DIR` (printing its warnings); Err: the exit status
/// when it is refused, after the message.
fn check_pin(opts: &Options) -> Result<Option<PinInfo>, i32> {
    let Some(dir) = &opts.pin else {
        return Ok(None);
    };
    match pin::validate(dir, opts.pin_mode) {
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

/// The program's file (Err: 127 or 126, as a shell), unless a strict pin
/// cannot apply to it.
fn resolve(opts: &Options, pin: Option<&PinInfo>) -> Result<PathBuf, i32> {
    let path_var = std::env::var_os("PATH");
    let resolved = match target::resolve(&opts.program, path_var.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            eprint(&format!("cudnn-trace: {}\n", e.message));
            return Err(e.code);
        }
    };
    // A setuid/setgid program runs in secure-execution mode, where the
    // loader ignores LD_AUDIT: it could load any cuDNN it likes. A strict pin
    // exists to prevent exactly that, so it refuses rather than run it
    // unpinned. (A static program loads no shared cuDNN itself, and the
    // programs it starts are pinned, so it only gets the warning below.)
    if let (Some(p), Some(why)) = (pin, target::secure_exec(&resolved)) {
        if p.mode == PinMode::Strict {
            eprint(&format!(
                "cudnn-trace: refusing to run {} under a strict cuDNN pin: {why}, so the loader \
                 ignores LD_AUDIT and the pin could not apply (--pin-mode warn runs it unpinned)\n",
                resolved.display()
            ));
            return Err(EXIT_INTERNAL);
        }
    }
    Ok(resolved)
}

/// The shim on disk. Without one the program runs untraced (Err: its exit
/// status), unless it is pinned: the pin is done by the shim.
fn locate_shim(opts: &Options, resolved: &Path, pinned: bool) -> Result<PathBuf, i32> {
    match shim::locate() {
        Ok(p) => Ok(p),
        // Without the shim, a pinned program would run unpinned, which is
        // what the pin exists to prevent.
        Err(e) if pinned => {
            eprint(&format!(
                "cudnn-trace: {e}; the cuDNN pin needs the shim, so {} is not run\n",
                opts.program.to_string_lossy()
            ));
            Err(EXIT_INTERNAL)
        }
        // Nowhere safe to put the shim: the program still runs, untraced.
        Err(e) if e.run_untraced() => {
            eprint(&format!(
                "cudnn-trace: {e}; running {} untraced\n",
                opts.program.to_string_lossy()
            ));
            Err(run_untraced(opts, resolved, None))
        }
        Err(e) => {
            eprint(&format!("cudnn-trace: {e}\n"));
            Err(EXIT_INTERNAL)
        }
    }
}

/// No trace directory (`why`): the program matters more than its trace, so
/// it runs as it is. But the pin is a safety feature and tracing is not: it
/// needs only the shim's audit role and no trace directory, so a pinned
/// program runs pinned (refusing would stop a production job over a place
/// to write logs; running unpinned would load the cuDNN the user said must
/// not be loaded). Returns the exit status.
fn run_without_trace_dir(
    opts: &Options,
    resolved: &Path,
    shim: &Path,
    pin: Option<&PinInfo>,
    why: &str,
) -> i32 {
    let Some(p) = pin else {
        eprint(&format!(
            "cudnn-trace: {why}; running {} untraced\n",
            opts.program.to_string_lossy()
        ));
        return run_untraced(opts, resolved, None);
    };
    eprint(&format!(
        "cudnn-trace: {why}; running {} untraced, still pinned to {}\n",
        opts.program.to_string_lossy(),
        p.dir.display()
    ));
    let env = env::pin_only_env(shim, &p.dir, p.mode, |k| std::env::var_os(k));
    run_untraced(opts, resolved, Some(&env))
}

/// Runs the program without a trace (the trace directory or the shim could
/// not be made), with the same exit status and signal handling as a traced
/// run. `env`: the pin's variables when the run is pinned, else None (the
/// launcher's own environment).
fn run_untraced(opts: &Options, file: &Path, env: Option<&ProgramEnv>) -> i32 {
    let signals = install_signals();
    let child_pid = match spawn(opts, file, env, &ChildStdio::passthrough()) {
        Ok(c) => c.pid(),
        Err((code, msg)) => {
            eprint(&format!("cudnn-trace: {msg}\n"));
            return code;
        }
    };
    match wait_program(Program::Child(child_pid), signals.as_ref()) {
        Ended::Exited(c) => c,
        Ended::Signaled { sig, .. } => {
            die_of(sig);
            128 + sig
        }
    }
}

/// `launcher.json` as it is when the program is about to start.
fn initial_record(
    opts: &Options,
    p: &Prepared,
    launcher_pid: u32,
    start_ms: u64,
) -> LauncherRecord {
    // Byte for byte (`model::path::from_os`): launcher.json writes a byte
    // that is not UTF-8 as the trace does, `\udcNN`.
    use crate::model::path::from_os;
    let mut argv = vec![from_os(&opts.program)];
    argv.extend(opts.args.iter().map(|a| from_os(a)));
    LauncherRecord {
        launcher_version: env!("CARGO_PKG_VERSION").to_string(),
        program: from_os(&opts.program),
        command: Some(from_os(p.resolved.as_os_str())),
        argv,
        cwd: std::env::current_dir().ok().map(|p| from_os(p.as_os_str())),
        out_dir: from_os(p.out_dir.as_os_str()),
        mode: if opts.all { "all" } else { "cuda" }.to_string(),
        shim: Some(from_os(p.shim.as_os_str())),
        hostname: record::hostname(),
        launcher_pid,
        start_wall_ms: start_ms,
        start: local_time(start_ms).1,
        warnings: p.warnings.clone(),
        pin: p.pin.as_ref().map(pin_record),
        ..Default::default()
    }
}

/// Starts the program traced, waits for it, and records how it ended.
fn run_traced(opts: &Options, p: Prepared, launcher_pid: u32, start_ms: u64) -> Outcome {
    let mut rec = initial_record(opts, &p, launcher_pid, start_ms);
    let mut env = env::program_env(&p.shim, &p.out_dir, opts.all, |k| std::env::var_os(k));
    if let Some(pin) = &p.pin {
        env.add_pin(&pin.dir, pin.mode);
    }
    let signals = install_signals();
    // Processes of the program's tree whose parent ends become ours, so
    // that the launcher knows when the last one has ended.
    outliving::become_subreaper();
    // Its file, made with room allocated before the program could fill the
    // disk (`Records::new`), takes every version of the record.
    let mut records = p.records;
    // Set up last, right before the program starts: the launcher's own
    // messages before this point are not the program's.
    let mut capture = Capture::begin(&p.out_dir, !opts.no_capture_stderr);
    rec.stderr = Some(capture.record());
    let child = match spawn(opts, &p.resolved, Some(&env), capture.child_stdio()) {
        Ok(c) => c,
        Err((code, msg)) => {
            rec.stderr = Some(capture.finish());
            eprint(&format!("cudnn-trace: {msg}\n"));
            let end = now_ms();
            rec.error = Some(msg);
            rec.end_wall_ms = Some(end);
            rec.end = Some(local_time(end).1);
            rec.status = Some(code);
            records.write(&rec);
            return Outcome::Done(code);
        }
    };
    let child_pid = child.pid();
    capture.program_started();
    rec.pid = Some(child_pid as u32);
    records.write(&rec);
    if let Some(work) = opts.meanwhile {
        work();
    }

    let (ended, leader) = match child {
        Started::Child(_) => (
            wait_program(Program::Child(child_pid), signals.as_ref()),
            None,
        ),
        Started::Session(leader) => {
            let leader_pid = leader.pid();
            if let Some(s) = &signals {
                s.catch_stop_requests();
            }
            let (term, relay) = capture
                .take_terminal()
                .expect("a terminal session has its terminal");
            let mut session = Session::new(leader, term, relay);
            let ended = wait_program(Program::Session(&mut session), signals.as_ref());
            // The user's modes are back (the wait did that); dropping the
            // session ends the key relay.
            drop(session);
            (ended, Some(leader_pid))
        }
    };
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
    let except: Vec<i32> = leader.into_iter().collect();
    // How the program ended goes on disk first (into the room kept for it
    // if the disk is full by then), when the launcher may still have to
    // wait: for processes of its tree that still run (they get their
    // grace, and the capture goes on meanwhile), or for the reader of the
    // real stderr. A launcher killed in that wait leaves it behind.
    // (Otherwise the next record follows at once, and one write is saved.)
    if outliving::has_children() || capture.may_wait() {
        records.write(&rec);
    }
    rec.outlived = outliving::wait_for(signals.as_ref(), outliving::CHILD_GRACE, &except);
    // Everything the program wrote reaches the real stderr before the
    // summary (and before the launcher ends by the program's signal).
    rec.stderr = Some(capture.finish());
    let end = now_ms();
    rec.end_wall_ms = Some(end);
    rec.end = Some(local_time(end).1);
    records.write(&rec);
    Outcome::Traced(Box::new(Traced {
        out_dir: p.out_dir,
        record: rec,
        records,
        status,
    }))
}
