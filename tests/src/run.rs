//! Building a scenario and running it bare and under the tracer.

use crate::spec::{self, Spec, Termination};
use crate::tools;
use crate::trace::{read_trace, ProcessTrace};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Scenario names (directory names under `tests/scenarios` that hold a
/// `build.sh` and a `scenario.env`), sorted.
pub fn list_scenarios() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(tools::scenarios_dir())
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| {
                    e.path().join("build.sh").is_file() && e.path().join("scenario.env").is_file()
                })
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Where scenarios are built and run: `<target>/cdt-scenarios` (or
/// `CDT_WORK_DIR`).
pub fn work_root() -> PathBuf {
    std::env::var_os("CDT_WORK_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| tools::target_dir().join("cdt-scenarios"))
}

/// A built scenario.
#[derive(Debug, Clone)]
pub struct Built {
    pub name: String,
    /// The scenario's source directory.
    pub src: PathBuf,
    /// Everything for this scenario: `build/`, `bare/`, `traced/`.
    pub root: PathBuf,
    /// The build output directory (`{B}`), also the programs' working directory.
    pub build: PathBuf,
    pub spec: Spec,
    /// Output of `build.sh`.
    pub build_log: String,
}

impl Built {
    /// Absolute path of the program to run.
    pub fn program(&self) -> PathBuf {
        let p = Path::new(&self.spec.program);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.build.join(p)
        }
    }
}

/// Builds scenario `name` into a fresh `<work_root>/<name>/build` with
/// `bash build.sh <dir>` (`CC` passes through; `CDT_STACK_CACHE` is
/// [`tools::stack_cache`]), then parses its `scenario.env`.
pub fn build_scenario(name: &str) -> Result<Built, String> {
    let src = tools::scenarios_dir().join(name);
    let root = work_root().join(name);
    if root.exists() {
        std::fs::remove_dir_all(&root).map_err(|e| format!("removing {}: {e}", root.display()))?;
    }
    let build = root.join("build");
    std::fs::create_dir_all(&build).map_err(|e| format!("creating {}: {e}", build.display()))?;
    let out = Command::new("bash")
        .arg(src.join("build.sh"))
        .arg(&build)
        .current_dir(&build)
        .env_remove("LD_PRELOAD")
        .env_remove("LD_AUDIT")
        .env_remove("LD_DEBUG")
        .env("CDT_STACK_CACHE", tools::stack_cache())
        .output()
        .map_err(|e| format!("running build.sh: {e}"))?;
    let build_log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        return Err(format!(
            "{name}: build.sh failed ({}):\n{build_log}",
            out.status
        ));
    }
    let text = std::fs::read_to_string(src.join("scenario.env"))
        .map_err(|e| format!("{name}: reading scenario.env: {e}"))?;
    let spec = spec::parse(&text, &build).map_err(|e| format!("{name}: {e}"))?;
    Ok(Built {
        name: name.to_string(),
        src,
        root,
        build,
        spec,
        build_log,
    })
}

/// How the traced run injects the shim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// `cudnn-trace --out DIR [--all] -- PROGRAM ARGS`.
    Cli,
    /// `LD_AUDIT` + `LD_PRELOAD` + `CUDNN_TRACE_DIR` + `CUDNN_TRACE_MODE` set directly.
    Shim,
}

/// `CDT_DRIVER=shim` drives the shim directly; anything else uses the launcher.
pub fn driver_from_env() -> Driver {
    match std::env::var("CDT_DRIVER").as_deref() {
        Ok("shim") => Driver::Shim,
        _ => Driver::Cli,
    }
}

impl Run {
    /// The launcher's pid in a CLI-driven run: its own loader output (it is a
    /// dynamically linked program too) is not the traced program's.
    pub fn launcher_pid(&self) -> Option<u32> {
        (self.driver == Some(Driver::Cli)).then_some(self.top_pid)
    }

    /// The trace files of a run with the shim.
    pub fn traces(&self) -> Result<Vec<ProcessTrace>, String> {
        let dir = self
            .trace_dir
            .as_deref()
            .ok_or("the bare run has no trace")?;
        read_trace(dir)
    }
}

/// The outcome of one run.
#[derive(Debug, Clone)]
pub struct Run {
    /// `bare`, `traced`, `pinned-cli` or `pinned-env`.
    pub label: &'static str,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// How the top process ended (`None`: killed on timeout).
    pub termination: Option<Termination>,
    /// `LD_DEBUG_OUTPUT` directory (files `ld.<pid>`).
    pub ld_dir: PathBuf,
    /// Trace directory (traced runs).
    pub trace_dir: Option<PathBuf>,
    /// Pid of the process we started (the launcher in CLI mode).
    pub top_pid: u32,
    pub driver: Option<Driver>,
    /// The working directory of the run (the build dir).
    pub cwd: PathBuf,
}

/// Variables that would change what the launcher or the loader does; every
/// command the tests run starts without them (the tests set what they need).
pub const CLEARED_ENV: &[&str] = &[
    "LD_PRELOAD",
    "LD_AUDIT",
    "LD_LIBRARY_PATH",
    "LD_DEBUG",
    "LD_DEBUG_OUTPUT",
    "LD_BIND_NOW",
    "CUDNN_TRACE_DIR",
    "CUDNN_TRACE_MODE",
    "CUDNN_TRACE_SHIM",
    "CUDNN_TRACE",
    "CUDNN_TRACE_SHIM_PATH",
    "CUDNN_TRACE_PIN",
    "CUDNN_TRACE_PIN_MODE",
    // The text layout: tests read plain, unwrapped text unless they ask.
    "COLUMNS",
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
];

/// Removes [`CLEARED_ENV`] from `cmd`'s environment.
pub fn clear_env(cmd: &mut Command) -> &mut Command {
    for k in CLEARED_ENV {
        cmd.env_remove(k);
    }
    cmd
}

/// The per-run timeout: `CDT_TIMEOUT` seconds, default 60.
pub fn timeout() -> Duration {
    Duration::from_secs(
        std::env::var("CDT_TIMEOUT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(60),
    )
}

/// Waits for `child` at most `limit`; past it, kills it, reaps it and
/// returns None.
pub fn wait_timeout(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            return Some(st);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

struct Finished {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    termination: Option<Termination>,
    pid: u32,
}

fn run_cmd(mut cmd: Command, dir: &Path, label: &'static str) -> Result<Finished, String> {
    let out_path = dir.join(format!("{label}.stdout"));
    let err_path = dir.join(format!("{label}.stderr"));
    let so = std::fs::File::create(&out_path).map_err(|e| e.to_string())?;
    let se = std::fs::File::create(&err_path).map_err(|e| e.to_string())?;
    cmd.stdin(Stdio::null()).stdout(so).stderr(se);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("{label}: spawning {cmd:?}: {e}"))?;
    let pid = child.id();
    let status = wait_timeout(&mut child, timeout());
    let termination = status.map(|st| match (st.code(), st.signal()) {
        (Some(c), _) => Termination::Exit(c),
        (None, Some(s)) => Termination::Signal(s),
        _ => Termination::Exit(-1),
    });
    let stdout = std::fs::read(&out_path).unwrap_or_default();
    let stderr = std::fs::read(&err_path).unwrap_or_default();
    Ok(Finished {
        stdout,
        stderr,
        termination,
        pid,
    })
}

fn base_command(b: &Built, program: &Path, ld_dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    clear_env(cmd.current_dir(&b.build));
    for (k, v) in &b.spec.env {
        cmd.env(k, v);
    }
    cmd.env("LD_DEBUG", "libs,files")
        .env("LD_DEBUG_OUTPUT", ld_dir.join("ld"));
    cmd
}

/// Sets what `Driver::Shim` sets: `LD_AUDIT`/`LD_PRELOAD` composed the way the
/// launcher does it (the shim last in `LD_AUDIT`, its preload helper last in
/// `LD_PRELOAD`, the scenario's own entries kept first), `CUDNN_TRACE_DIR`,
/// `CUDNN_TRACE_MODE`, `CUDNN_TRACE_SHIM`.
fn add_shim_env(cmd: &mut Command, b: &Built, shim: &Path, helper: &Path, trace_dir: &Path) {
    let user = |k: &str| {
        b.spec
            .env
            .iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    let compose = |k: &str, ours: &Path| match user(k) {
        Some(u) if !u.is_empty() => format!("{u}:{}", ours.display()),
        _ => ours.display().to_string(),
    };
    cmd.env("LD_AUDIT", compose("LD_AUDIT", shim))
        .env("LD_PRELOAD", compose("LD_PRELOAD", helper))
        .env("CUDNN_TRACE_DIR", trace_dir)
        .env("CUDNN_TRACE_MODE", &b.spec.mode)
        .env("CUDNN_TRACE_SHIM", shim);
}

fn fresh_dir(p: &Path) -> Result<(), String> {
    if p.exists() {
        std::fs::remove_dir_all(p).map_err(|e| format!("removing {}: {e}", p.display()))?;
    }
    std::fs::create_dir_all(p).map_err(|e| format!("creating {}: {e}", p.display()))
}

/// Runs the scenario without the shim, with the `LD_DEBUG` oracle on.
pub fn run_bare(b: &Built) -> Result<Run, String> {
    let dir = b.root.join("bare");
    let ld_dir = dir.join("ld");
    fresh_dir(&ld_dir)?;
    let mut cmd = base_command(b, &b.program(), &ld_dir);
    cmd.args(&b.spec.args);
    let f = run_cmd(cmd, &dir, "bare")?;
    Ok(Run {
        label: "bare",
        stdout: f.stdout,
        stderr: f.stderr,
        termination: f.termination,
        ld_dir,
        trace_dir: None,
        top_pid: f.pid,
        driver: None,
        cwd: b.build.clone(),
    })
}

/// Runs the scenario under the tracer (same environment, same `LD_DEBUG`).
pub fn run_traced(b: &Built, driver: Driver) -> Result<Run, String> {
    run_under_shim(b, driver, "traced", None)
}

/// A run with the shim, under `<root>/<label>`: `ld/` for the oracle,
/// `trace/` for the trace; `pin`: the pin directory and mode, if any
/// (see [`run_pinned`]).
fn run_under_shim(
    b: &Built,
    driver: Driver,
    label: &'static str,
    pin: Option<(&Path, Option<&str>)>,
) -> Result<Run, String> {
    let t = tools::tools()?;
    let dir = b.root.join(label);
    let ld_dir = dir.join("ld");
    let trace_dir = dir.join("trace");
    fresh_dir(&ld_dir)?;
    fresh_dir(&trace_dir)?;
    let cmd = match driver {
        Driver::Cli => {
            if !t.cli.is_file() {
                return Err(format!("launcher not found at {}", t.cli.display()));
            }
            let mut cmd = base_command(b, &t.cli, &ld_dir);
            cmd.arg("--out").arg(&trace_dir);
            if b.spec.mode == "all" {
                cmd.arg("--all");
            }
            if let Some((pin_dir, mode)) = pin {
                cmd.arg("--pin").arg(pin_dir);
                if let Some(m) = mode {
                    cmd.arg("--pin-mode").arg(m);
                }
            }
            cmd.arg("--").arg(b.program()).args(&b.spec.args);
            cmd
        }
        Driver::Shim => {
            if !t.shim.is_file() {
                return Err(format!("shim not found at {}", t.shim.display()));
            }
            if !t.preload.is_file() {
                return Err(format!(
                    "preload helper not found at {}",
                    t.preload.display()
                ));
            }
            let mut cmd = base_command(b, &b.program(), &ld_dir);
            cmd.args(&b.spec.args);
            add_shim_env(&mut cmd, b, &t.shim, &t.preload, &trace_dir);
            if let Some((pin_dir, mode)) = pin {
                cmd.env("CUDNN_TRACE_PIN", pin_dir);
                if let Some(m) = mode {
                    cmd.env("CUDNN_TRACE_PIN_MODE", m);
                }
            }
            cmd
        }
    };
    let f = run_cmd(cmd, &dir, label)?;
    Ok(Run {
        label,
        stdout: f.stdout,
        stderr: f.stderr,
        termination: f.termination,
        ld_dir,
        trace_dir: Some(trace_dir),
        top_pid: f.pid,
        driver: Some(driver),
        cwd: b.build.clone(),
    })
}

impl Built {
    /// The pin directory of a pin scenario, absolute (relative to the build
    /// dir), as handed to the launcher and to `CUDNN_TRACE_PIN`.
    pub fn pin_dir(&self) -> Option<PathBuf> {
        let p = self.spec.pin.as_ref()?;
        let d = Path::new(&p.dir);
        Some(if d.is_absolute() {
            d.to_path_buf()
        } else {
            self.build.join(d)
        })
    }
}

/// Runs a pin scenario pinned, with the same environment and `LD_DEBUG`:
/// * `Driver::Cli`: `cudnn-trace --out T [--all] --pin DIR [--pin-mode M] -- PROGRAM ARGS`
///   (label `pinned-cli`, under `<root>/pinned-cli`);
/// * `Driver::Shim`: no launcher, the variables production sets by hand:
///   `LD_AUDIT`, `CUDNN_TRACE_PIN=<abs DIR>`, `CUDNN_TRACE_PIN_MODE` (when
///   `pin-mode` is given), plus `LD_PRELOAD`/`CUDNN_TRACE_DIR`/`CUDNN_TRACE_MODE`
///   to trace, composed as for [`run_traced`] (label `pinned-env`).
pub fn run_pinned(b: &Built, driver: Driver) -> Result<Run, String> {
    let pin = b
        .spec
        .pin
        .as_ref()
        .ok_or_else(|| format!("{}: not a pin scenario", b.name))?;
    let pin_dir = b.pin_dir().unwrap_or_default();
    let label: &'static str = match driver {
        Driver::Cli => "pinned-cli",
        Driver::Shim => "pinned-env",
    };
    run_under_shim(b, driver, label, Some((&pin_dir, pin.mode.as_deref())))
}
