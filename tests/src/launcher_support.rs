//! Support for the tests that run the `cudnn-trace` binary (`launcher.rs`,
//! `pin_cli.rs`, `findings.rs`): fresh work directories, compiling the C
//! programs of `tests/launcher/`, building fake CUDA stacks, running
//! commands with a timeout, and reading `launcher.json`,
//! `stderr.txt` and `cudnn-trace report --json`.

use crate::run::{clear_env, timeout, wait_timeout};
use crate::tools;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

/// Where the launcher tests build and run: `<target>/cdt-launcher`.
pub fn launcher_root() -> PathBuf {
    tools::target_dir().join("cdt-launcher")
}

/// The C sources of the launcher tests (`tests/launcher`).
pub fn sources_dir() -> PathBuf {
    tools::package_dir().join("launcher")
}

/// A fresh, empty, absolute directory `<target>/cdt-launcher/<name>`.
pub fn work_dir(name: &str) -> PathBuf {
    let d = launcher_root().join(name);
    if d.exists() {
        std::fs::remove_dir_all(&d).unwrap_or_else(|e| panic!("removing {}: {e}", d.display()));
    }
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("creating {}: {e}", d.display()));
    d
}

/// A fresh work directory that another user (uid 65534 in the root-only
/// tests) can reach by absolute path: `work_dir(name)` when every ancestor
/// of the target directory lets others search it, else a directory under
/// the system's temporary directory (CI clones into a 0700 directory, and a
/// umask of 077 makes `target/` itself unreachable).
pub fn work_dir_for_others(name: &str) -> PathBuf {
    let d = work_dir(name);
    if searchable_by_others(&d) {
        return d;
    }
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let base = std::env::temp_dir().join(format!("cdt-launcher-tests-{uid}"));
    let d = base.join(name);
    if d.exists() {
        std::fs::remove_dir_all(&d).unwrap_or_else(|e| panic!("removing {}: {e}", d.display()));
    }
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("creating {}: {e}", d.display()));
    use std::os::unix::fs::PermissionsExt;
    for p in [&base, &d] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("chmod {}: {e}", p.display()));
    }
    assert!(
        searchable_by_others(&d),
        "no directory that other users can reach: {} has an ancestor they cannot search",
        d.display()
    );
    d
}

/// Whether every ancestor of `dir` (not `dir` itself) has the search bit
/// for others.
fn searchable_by_others(dir: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    dir.ancestors()
        .skip(1)
        .all(|a| std::fs::metadata(a).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
}

/// `${CC:-cc}` as a command (CC may carry arguments, as make allows).
pub fn cc() -> Command {
    let cc = std::env::var("CC")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .unwrap_or_else(|| "cc".into());
    let mut words = cc.split_whitespace();
    let mut cmd = Command::new(words.next().unwrap_or("cc"));
    clear_env(cmd.args(words));
    cmd
}

/// Runs a C compiler command (from [`cc`]); panics with its output when it
/// fails, or, with `no_warnings`, when it says anything on stderr.
pub fn run_cc(cmd: &mut Command, what: &str, no_warnings: bool) {
    let res = cmd
        .output()
        .unwrap_or_else(|e| panic!("running the C compiler {cmd:?}: {e}"));
    assert!(
        res.status.success() && (!no_warnings || res.stderr.is_empty()),
        "compiling {what} ({}): {cmd:?}\n{}{}",
        res.status,
        String::from_utf8_lossy(&res.stdout),
        String::from_utf8_lossy(&res.stderr)
    );
}

/// Compiles `tests/launcher/<source>` into `out` with `${CC:-cc} -std=gnu11
/// -O2 -Wall <extra...>`; panics with the compiler's output on failure.
pub fn compile<S: AsRef<OsStr>>(source: &str, out: &Path, extra: &[S]) {
    let mut cmd = cc();
    cmd.args(["-std=gnu11", "-O2", "-Wall"])
        .arg("-o")
        .arg(out)
        .arg(sources_dir().join(source))
        .args(extra);
    run_cc(&mut cmd, source, false);
}

/// `tests/launcher/<source>` compiled (without extra flags) once per test
/// process, copied to `out`.
pub fn compile_copy(source: &str, out: &Path) {
    let built = once_per_process(format!("programs/{source}"), |dir| {
        compile::<&str>(source, &dir.join("a.out"), &[]);
    });
    copy_executable(&built.join("a.out"), out);
}

/// Copies the program `from` to `to` for a test to run, by a `cp` child.
///
/// A copy made here would open `to` for writing in this process, and a
/// test on another thread that forks at that moment (a `pre_exec` hook)
/// holds that descriptor until its child execs: running `to` meanwhile
/// fails with ETXTBSY ("Text file busy"; CI saw it once). In a child the
/// descriptor lives and dies there.
pub fn copy_executable(from: &Path, to: &Path) {
    let st = Command::new("cp")
        .arg("--")
        .arg(from)
        .arg(to)
        .status()
        .unwrap_or_else(|e| panic!("running cp: {e}"));
    assert!(st.success(), "cp {} {}: {st}", from.display(), to.display());
}

/// How a command ended, and what it wrote.
#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Output {
    /// Exit status, None when killed by a signal.
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    pub fn signal(&self) -> Option<i32> {
        self.status.signal()
    }

    pub fn out(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn err(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    /// Everything, for assertion messages.
    pub fn show(&self) -> String {
        format!(
            "status: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status,
            self.out(),
            self.err()
        )
    }
}

/// Runs `cmd` with piped stdout/stderr and `stdin` (or /dev/null) and a
/// timeout (`CDT_TIMEOUT`, default 60 s). Panics when it cannot be started
/// or hangs.
pub fn run(mut cmd: Command, stdin: Option<&[u8]>) -> Output {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {cmd:?}: {e}"));
    let feeder = stdin.map(|bytes| {
        let mut pipe = child.stdin.take().expect("piped stdin");
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        })
    });
    let out = drain(child.stdout.take().expect("piped stdout"));
    let err = drain(child.stderr.take().expect("piped stderr"));
    let status = wait_within(&mut child, timeout(), &format!("{cmd:?}"));
    if let Some(f) = feeder {
        let _ = f.join();
    }
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// Reads `r` to its end in a thread.
pub fn drain<R: Read + Send + 'static>(mut r: R) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        v
    })
}

/// Waits for `child`, killing it and failing after `limit`.
pub fn wait_within(child: &mut std::process::Child, limit: Duration, what: &str) -> ExitStatus {
    wait_timeout(child, limit).unwrap_or_else(|| panic!("{what} did not finish within {limit:?}"))
}

/// A command for `program` in `cwd` with a clean loader environment.
pub fn bare(program: impl AsRef<OsStr>, cwd: &Path) -> Command {
    let mut cmd = Command::new(program);
    clear_env(cmd.current_dir(cwd));
    cmd
}

/// The cache directory the launcher extracts its embedded shim to in these
/// tests (`XDG_CACHE_HOME`), so that they leave nothing in `~/.cache`.
pub fn shim_cache() -> PathBuf {
    launcher_root().join("xdg-cache")
}

/// `cudnn-trace` (built by [`tools::tools`]) in `cwd`, with a clean loader
/// environment; the launcher uses the shim embedded in it.
pub fn launcher(cwd: &Path) -> Command {
    let t = tools::tools().unwrap_or_else(|e| panic!("{e}"));
    assert!(t.cli.is_file(), "launcher not found at {}", t.cli.display());
    let mut cmd = bare(&t.cli, cwd);
    cmd.env("XDG_CACHE_HOME", shim_cache());
    cmd
}

/// `cudnn-trace report --json ARGS...` in `cwd`: the run, and the document
/// when stdout parsed as JSON.
pub fn report_json<S: AsRef<OsStr>>(cwd: &Path, args: &[S]) -> (Output, Option<serde_json::Value>) {
    let mut cmd = launcher(cwd);
    cmd.args(["report", "--json"]).args(args);
    let out = run(cmd, None);
    let doc = serde_json::from_slice(&out.stdout).ok();
    (out, doc)
}

/// `cudnn-trace report --json DIR` in `cwd`, which must succeed: the document.
pub fn report_ok(cwd: &Path, dir: &Path) -> serde_json::Value {
    let (out, doc) = report_json(cwd, &[dir]);
    assert_eq!(
        out.code(),
        Some(0),
        "report --json {}:\n{}",
        dir.display(),
        out.show()
    );
    doc.unwrap_or_else(|| panic!("report --json printed no JSON:\n{}", out.show()))
}

/// Runs `tests/fixtures/build-stack.sh KIND OUT OPTS...`; panics on failure.
/// Each distinct stack is built once per test process ([`tools::stack_cache`])
/// and copied to OUT.
pub fn build_stack(kind: &str, out: &Path, opts: &[&str]) {
    run_build_stack(kind, out, opts, Some(&tools::stack_cache()));
}

/// `build-stack.sh`, with `CDT_STACK_CACHE` when `cache` is given.
fn run_build_stack(kind: &str, out: &Path, opts: &[&str], cache: Option<&Path>) {
    let script = tools::package_dir().join("fixtures").join("build-stack.sh");
    let mut cmd = Command::new("bash");
    clear_env(cmd.arg(&script).arg(kind).arg(out).args(opts));
    if let Some(c) = cache {
        cmd.env("CDT_STACK_CACHE", c);
    }
    let res = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        res.status.success(),
        "{cmd:?} failed ({}):\n{}{}",
        res.status,
        String::from_utf8_lossy(&res.stdout),
        String::from_utf8_lossy(&res.stderr)
    );
}

/// A directory `<per-process dir>/<name>` ([`tools::per_process_dir`]),
/// filled by `make` once per test process (whichever test asks first; the
/// others wait).
fn once_per_process(name: String, make: impl FnOnce(&Path)) -> &'static Path {
    static MADE: Mutex<BTreeMap<String, &'static OnceLock<PathBuf>>> = Mutex::new(BTreeMap::new());
    let cell: &'static OnceLock<PathBuf> = MADE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(name.clone())
        .or_insert_with(|| Box::leak(Box::new(OnceLock::new())));
    cell.get_or_init(|| {
        let d = tools::per_process_dir().join(&name);
        fs::create_dir_all(&d).unwrap_or_else(|e| panic!("creating {}: {e}", d.display()));
        make(&d);
        d
    })
}

/// The fake install `build-stack.sh KIND DIR OPTS...` makes, in a directory
/// of its own made once per test process. Shared: copy it to change it.
pub fn stack(kind: &str, opts: &[&str]) -> &'static Path {
    let name = format!("stack-{kind}_{}", opts.join("_"));
    once_per_process(name, |d| run_build_stack(kind, d, opts, None))
}

/// A pip-like fake cuDNN 9.19.0 (wheel layout: `libcudnn.so.9`, …), built
/// once per test process under `<target>/cdt-launcher/stack/pip919`.
pub fn pip_cudnn_919() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = launcher_root().join("stack").join("pip919");
        if d.exists() {
            std::fs::remove_dir_all(&d).unwrap_or_else(|e| panic!("removing {}: {e}", d.display()));
        }
        let opts = ["--version", "9.19.0", "--cuda", "13.0"];
        run_build_stack("cudnn9", &d, &opts, None);
        d
    })
}

/// The `*.jsonl` files directly in `dir`, sorted.
pub fn trace_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// `launcher.json` of a trace directory.
pub fn launcher_record(dir: &Path) -> serde_json::Value {
    let p = dir.join("launcher.json");
    let text =
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", p.display()))
}

/// The program's stderr as the launcher kept it in a trace directory
/// (`stderr.txt`).
pub fn stderr_copy(dir: &Path) -> Vec<u8> {
    let p = dir.join("stderr.txt");
    fs::read(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

/// Lines of `text` that start with `prefix`.
pub fn lines_starting<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// Starts `cmd` with the signals of `ignored` ignored and those of
/// `blocked` blocked, as nohup, a background job of a non-interactive
/// shell, Python's `subprocess` (`restore_signals=False`) or a daemon that
/// lets the kernel reap its children start programs.
pub fn with_signal_state(cmd: &mut Command, ignored: &'static [i32], blocked: &'static [i32]) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            for &sig in ignored {
                libc::signal(sig, libc::SIG_IGN);
            }
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for &sig in blocked {
                libc::sigaddset(&mut set, sig);
            }
            libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            Ok(())
        });
    }
}

/// `io sigs`' two lines (`ignored: …`, `blocked: …`) list every signal of
/// `ignored` and of `blocked` (what the tests themselves inherited may add
/// more).
pub fn assert_signal_state(lines: &[&str], ignored: &[i32], blocked: &[i32]) {
    let listed = |line: &str, sig: i32| line.split_whitespace().any(|w| w == sig.to_string());
    for &sig in ignored {
        assert!(
            lines[0].starts_with("ignored:") && listed(lines[0], sig),
            "{lines:?}"
        );
    }
    for &sig in blocked {
        assert!(
            lines[1].starts_with("blocked:") && listed(lines[1], sig),
            "{lines:?}"
        );
    }
}
