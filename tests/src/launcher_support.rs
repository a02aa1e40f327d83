//! Support for the launcher tests (`tests/launcher.rs`): fresh work
//! directories, compiling the C programs of `tests/launcher/`, running
//! commands with a timeout, and `cudnn-trace report --json`.

use crate::tools;
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::run::CLEARED_ENV;

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

/// `${CC:-cc}` as a command (CC may carry arguments, as make allows).
pub fn cc() -> Command {
    let cc = std::env::var("CC")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .unwrap_or_else(|| "cc".into());
    let mut words = cc.split_whitespace();
    let mut cmd = Command::new(words.next().unwrap_or("cc"));
    cmd.args(words);
    for k in CLEARED_ENV {
        cmd.env_remove(k);
    }
    cmd
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
    let res = cmd
        .output()
        .unwrap_or_else(|e| panic!("running the C compiler {cmd:?}: {e}"));
    assert!(
        res.status.success(),
        "compiling {source} failed ({}): {cmd:?}\n{}{}",
        res.status,
        String::from_utf8_lossy(&res.stdout),
        String::from_utf8_lossy(&res.stderr)
    );
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

fn timeout() -> Duration {
    Duration::from_secs(
        std::env::var("CDT_TIMEOUT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(60),
    )
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
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut v);
            }
            v
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            break st;
        }
        if start.elapsed() > timeout() {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {:?}", timeout());
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    if let Some(f) = feeder {
        let _ = f.join();
    }
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// A command for `program` in `cwd` with a clean loader environment.
pub fn bare(program: impl AsRef<OsStr>, cwd: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(cwd);
    for k in CLEARED_ENV {
        cmd.env_remove(k);
    }
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

/// Runs `tests/fixtures/build-stack.sh ARGS...`; panics on failure.
pub fn build_stack<S: AsRef<OsStr>>(args: &[S]) {
    let script = tools::package_dir().join("fixtures").join("build-stack.sh");
    let mut cmd = Command::new("bash");
    cmd.arg(&script).args(args);
    for k in CLEARED_ENV {
        cmd.env_remove(k);
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

/// A pip-like fake cuDNN 9.19.0 (wheel layout: `libcudnn.so.9`, …), built
/// once per test process under `<target>/cdt-launcher/stack/pip919`.
pub fn pip_cudnn_919() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = launcher_root().join("stack").join("pip919");
        if d.exists() {
            std::fs::remove_dir_all(&d).unwrap_or_else(|e| panic!("removing {}: {e}", d.display()));
        }
        build_stack(&[
            OsStr::new("cudnn9"),
            d.as_os_str(),
            OsStr::new("--version"),
            OsStr::new("9.19.0"),
            OsStr::new("--cuda"),
            OsStr::new("13.0"),
        ]);
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

/// Lines of `text` that start with `prefix`.
pub fn lines_starting<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(prefix)).collect()
}
