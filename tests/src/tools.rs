//! Where the workspace, its target directory and the binaries under test are,
//! and building them once per test process.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The workspace root (the parent of this package's directory).
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// This package's directory (`<workspace>/tests`).
pub fn package_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The directory holding the loader scenarios.
pub fn scenarios_dir() -> PathBuf {
    package_dir().join("scenarios")
}

/// The profile directory the running test binary was built into
/// (`<target>/<profile>` or `<target>/<triple>/<profile>`), taken from the
/// test executable's own path (`…/<profile>/deps/<test>-<hash>`).
fn profile_dir_of_current_exe() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let deps = exe.parent()?;
    if deps.file_name()? != "deps" {
        return None;
    }
    Some(deps.parent()?.to_path_buf())
}

/// The cargo target directory: `CARGO_TARGET_DIR` if set, else derived from
/// the test executable's path, else `<workspace>/target`.
pub fn target_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("CARGO_TARGET_DIR") {
        let d = PathBuf::from(d);
        return if d.is_absolute() {
            d
        } else {
            workspace_root().join(d)
        };
    }
    if let Some(p) = profile_dir_of_current_exe() {
        // <target>/<profile> or <target>/<triple>/<profile>
        let up = p.parent().map(Path::to_path_buf);
        if let Some(up) = up {
            if up.join("CACHEDIR.TAG").exists() || up.file_name().is_some_and(|n| n == "target") {
                return up;
            }
            if let Some(upup) = up.parent() {
                if upup.join("CACHEDIR.TAG").exists() {
                    return upup.to_path_buf();
                }
            }
            return up;
        }
    }
    workspace_root().join("target")
}

/// The profile directory binaries are looked up in.
pub fn profile_dir() -> PathBuf {
    profile_dir_of_current_exe().unwrap_or_else(|| target_dir().join("debug"))
}

/// A directory of this test process alone, made on first use:
/// `<target>/cdt-per-process/<pid>`. Those of processes that have ended
/// are removed then.
pub fn per_process_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = target_dir().join("cdt-per-process");
        let me = std::process::id();
        for e in std::fs::read_dir(&base).into_iter().flatten().flatten() {
            let pid = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok());
            // SAFETY: signal 0 only checks whether the process exists.
            let ended = pid.is_some_and(|p| {
                let gone = unsafe { libc::kill(p, 0) } != 0;
                gone && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
            });
            if ended || pid == Some(me as i32) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
        let d = base.join(me.to_string());
        std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("creating {}: {e}", d.display()));
        d
    })
}

/// `CDT_STACK_CACHE` for `tests/fixtures/build-stack.sh`: each fake stack is
/// built once per test process, then copied.
pub fn stack_cache() -> PathBuf {
    per_process_dir().join("stacks")
}

/// The artefacts under test.
#[derive(Debug, Clone)]
pub struct Tools {
    /// The launcher, `cudnn-trace`.
    pub cli: PathBuf,
    /// The shim, `libcdtrace.so` (the audit library).
    pub shim: PathBuf,
    /// Its preload helper, `libcdtrace_preload.so`.
    pub preload: PathBuf,
    /// Output of the build step (empty when skipped), for failure messages.
    pub build_log: String,
}

static TOOLS: OnceLock<Result<Tools, String>> = OnceLock::new();

/// Builds `cudnn-trace` and `cudnn-trace-shim` once per test process (same
/// profile as the running test) and the preload helper (its own workspace,
/// always `--release`, into `<target>/cdt-preload`), then returns their paths.
///
/// Environment:
/// * `CUDNN_TRACE_BIN`, `CUDNN_TRACE_SHIM_LIB`: use these files instead (the
///   helper is then the `libcdtrace_preload.so` next to the shim, if there
///   is one);
/// * `CDT_SKIP_BUILD=1`: do not run cargo, use what is in the profile dir.
pub fn tools() -> Result<&'static Tools, String> {
    TOOLS
        .get_or_init(build_tools)
        .as_ref()
        .map_err(Clone::clone)
}

fn build_tools() -> Result<Tools, String> {
    let prof = profile_dir();
    let cli_env = std::env::var_os("CUDNN_TRACE_BIN").map(PathBuf::from);
    let shim_env = std::env::var_os("CUDNN_TRACE_SHIM_LIB").map(PathBuf::from);
    let mut build_log = String::new();
    let skip = std::env::var("CDT_SKIP_BUILD").is_ok_and(|v| v == "1")
        || (cli_env.is_some() && shim_env.is_some());
    if !skip {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(workspace_root()).args([
            "build",
            "-p",
            "cudnn-trace",
            "-p",
            "cudnn-trace-shim",
        ]);
        match prof.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => {}
            Some("release") => {
                cmd.arg("--release");
            }
            Some(other) => {
                cmd.args(["--profile", other]);
            }
        }
        // A `--target` build has <target>/<triple>/<profile>. (A target
        // directory inside another one, `target/bullseye` of
        // scripts/test-old-glibc.sh, is not a triple: CARGO_TARGET_DIR says.)
        if let (Some(triple_dir), Some(t)) = (prof.parent(), prof.parent().and_then(Path::parent)) {
            if t.join("CACHEDIR.TAG").exists() && triple_dir != t && triple_dir != target_dir() {
                if let Some(triple) = triple_dir.file_name() {
                    cmd.arg("--target").arg(triple);
                }
            }
        }
        let out = cmd
            .output()
            .map_err(|e| format!("running cargo build: {e}"))?;
        build_log = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if !out.status.success() {
            return Err(format!(
                "`cargo build -p cudnn-trace -p cudnn-trace-shim` failed ({}):\n{build_log}",
                out.status
            ));
        }
    }
    let cli = cli_env.unwrap_or_else(|| prof.join("cudnn-trace"));
    let shim = shim_env.unwrap_or_else(|| prof.join("libcdtrace.so"));
    let next_to_shim = shim.with_file_name(PRELOAD_FILE);
    let preload = if next_to_shim.is_file() && skip {
        next_to_shim
    } else {
        let built = preload_dir().join("release").join(PRELOAD_FILE);
        if !skip {
            build_log.push_str(&build_preload()?);
        }
        built
    };
    Ok(Tools {
        cli,
        shim,
        preload,
        build_log,
    })
}

/// File name of the preload helper.
pub const PRELOAD_FILE: &str = "libcdtrace_preload.so";

/// Where the test suite builds the preload helper.
pub fn preload_dir() -> PathBuf {
    target_dir().join("cdt-preload")
}

/// `cargo build --release --manifest-path shim/preload/Cargo.toml`: a
/// workspace of its own (panic = "abort", no std). Returns cargo's output.
fn build_preload() -> Result<String, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let manifest = workspace_root().join("shim/preload/Cargo.toml");
    let out = Command::new(cargo)
        .current_dir(workspace_root())
        .args(["build", "--release", "--locked", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(preload_dir())
        .output()
        .map_err(|e| format!("running cargo build for the preload helper: {e}"))?;
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        return Err(format!(
            "`cargo build --release --manifest-path {}` failed ({}):\n{log}",
            manifest.display(),
            out.status
        ));
    }
    Ok(log)
}
