//! `cudnn-trace env --pin DIR [--pin-mode M] [--shim PATH] [--out TRACE_DIR]`:
//! the pin without the launcher.
//!
//! Production services do not run under `cudnn-trace`; they get the pin from
//! their environment (`docs/pin.md`, "Environment"). This command validates
//! DIR exactly as the launcher does (findings on stderr) and prints the
//! variables to set, in three syntaxes: a shell, a Dockerfile and a systemd
//! unit, each quoted for its own rules.

use crate::args::EnvArgs;
use crate::machine::pin::{self, PinInfo};
use crate::model::Ver;
use crate::model::{io_err, io_msg};
use crate::shim;
use cudnn_trace_format::envvar;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Exit statuses of `env`.
const VALID: i32 = 0;
const REFUSED: i32 = 1;
const USAGE: i32 = 2;

/// Runs `cudnn-trace env`; returns the exit status.
pub fn run(a: EnvArgs) -> i32 {
    // A shim path the loader cannot take is a wrong argument: say so before
    // the (slower) validation.
    let shim_dest = match &a.shim {
        Some(p) => match absolute(p) {
            Ok(abs) if shim::loader_safe(&abs) => Some(abs),
            Ok(abs) => {
                errln!(
                    "cudnn-trace: env: --shim {}: LD_AUDIT cannot take a path with a space, colon or '$'",
                    abs.display()
                );
                return USAGE;
            }
            Err(e) => {
                errln!("cudnn-trace: env: --shim {}: {e}", p.display());
                return USAGE;
            }
        },
        None => None,
    };
    let out = match a.out.as_deref().map(absolute).transpose() {
        Ok(o) => o,
        Err(e) => {
            errln!("cudnn-trace: env: --out: {e}");
            return USAGE;
        }
    };
    let info = match pin::validate(&a.pin, a.pin_mode) {
        Ok(i) => i,
        Err(refusal) => {
            errln!("cudnn-trace: {refusal}");
            return REFUSED;
        }
    };
    for w in &info.warnings {
        errln!("cudnn-trace: warning: {w}");
    }
    errln!("cudnn-trace: {}", describe(&info));

    let (shim_path, per_user) = match &shim_dest {
        Some(dest) => match install_shim(dest) {
            Ok(()) => (dest.clone(), false),
            Err(e) => {
                errln!("cudnn-trace: env: cannot install the shim: {e}");
                return REFUSED;
            }
        },
        None => match shim::locate() {
            // CUDNN_TRACE_SHIM_PATH names a copy the user chose.
            Ok(p) => (p, std::env::var_os(shim::SHIM_PATH_ENV).is_none()),
            Err(e) => {
                errln!("cudnn-trace: env: {e}; give --shim PATH to install it there");
                return REFUSED;
            }
        },
    };
    match render(&info, &shim_path, per_user, out.as_deref()) {
        Ok(text) => {
            crate::report::print_stdout(&text);
            VALID
        }
        Err(e) => {
            errln!("cudnn-trace: env: {e}");
            REFUSED
        }
    }
}

/// `p` made absolute against the working directory (not resolved: the
/// caller's symlinks are the caller's choice of a stable path).
fn absolute(p: &Path) -> Result<PathBuf, String> {
    std::path::absolute(p).map_err(|e| io_msg(&e))
}

/// One line about a valid directory.
fn describe(info: &PinInfo) -> String {
    let version = match &info.version {
        Some(v) => format!("cuDNN {v}"),
        None => format!("cuDNN {} (exact version unknown)", info.major),
    };
    let cuda = info
        .cuda_build
        .map(|c| format!(" built with CUDA {}", Ver::from_cuda_int(c)))
        .unwrap_or_default();
    let warned = match info.warnings.len() {
        0 => String::new(),
        1 => " (1 warning)".into(),
        n => format!(" ({n} warnings)"),
    };
    format!(
        "{}: {version}{cuda}, {} files; the pin is valid{warned}",
        info.dir.display(),
        info.files.len()
    )
}

/// Installs the embedded shim at `dest` (absolute): a temporary file in the
/// same directory, written and synced, then renamed over `dest`, so that a
/// process starting meanwhile loads the old file or the new one, never half
/// of one. Mode 0644: the loader only reads it.
pub fn install_shim(dest: &Path) -> Result<(), String> {
    match fs::symlink_metadata(dest) {
        Ok(md) if md.file_type().is_symlink() => {
            return Err(format!(
                "{} is a symbolic link; not writing through it (remove it, or give the path it leads to)",
                dest.display()
            ))
        }
        Ok(md) if md.is_dir() => {
            return Err(format!(
                "{} is a directory; give the file's path, such as {}",
                dest.display(),
                dest.join(shim::SHIM_FILE).display()
            ))
        }
        _ => {}
    }
    let bytes: Vec<u8> = match shim::embedded() {
        Some(b) => b.to_vec(),
        // A development binary without its shim: the override names one.
        None => match std::env::var_os(shim::SHIM_PATH_ENV).filter(|p| !p.is_empty()) {
            Some(p) => fs::read(&p).map_err(|e| io_err(Path::new(&p), &e))?,
            None => {
                return Err(format!(
                    "this binary was built without its shim; set {}=/path/to/{}",
                    shim::SHIM_PATH_ENV,
                    shim::SHIM_FILE
                ))
            }
        },
    };
    let (Some(parent), Some(name)) = (dest.parent(), dest.file_name()) else {
        return Err(format!("{} is not a file path", dest.display()));
    };
    fs::create_dir_all(parent).map_err(|e| io_err(parent, &e))?;
    let tmp = parent.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let write = || -> std::io::Result<()> {
        let _ = fs::remove_file(&tmp);
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)?;
        f.write_all(&bytes)?;
        f.set_permissions(fs::Permissions::from_mode(0o644))?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, dest)?;
        // The rename itself survives a crash once the directory is synced.
        fs::File::open(parent)?.sync_all()
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io_err(dest, &e)
    })
}

/// Characters a POSIX shell takes literally outside quotes.
fn shell_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c)
}

/// A shell word: as is when plain, else in single quotes (in which nothing
/// is special but the quote itself, written `'\''`).
pub fn sh_quote(v: &str) -> String {
    if !v.is_empty() && v.chars().all(shell_plain) {
        return v.to_string();
    }
    format!("'{}'", v.replace('\'', r"'\''"))
}

/// A Dockerfile `ENV` value: double quotes, in which the escape character
/// `\` escapes `"`, `\` and `$` (else `$X` would be substituted at build
/// time).
pub fn docker_quote(v: &str) -> String {
    let mut s = String::from("\"");
    for c in v.chars() {
        if matches!(c, '"' | '\\' | '$') {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('"');
    s
}

/// A systemd `Environment=` assignment: the whole `KEY=value` in double
/// quotes, with `\` and `"` escaped (systemd.syntax) and `%` doubled (unit
/// file specifiers are expanded in Environment=; `$` is not).
pub fn systemd_quote(key: &str, v: &str) -> String {
    let mut s = format!("\"{key}=");
    for c in v.chars() {
        match c {
            '"' | '\\' => {
                s.push('\\');
                s.push(c);
            }
            '%' => s.push_str("%%"),
            _ => s.push(c),
        }
    }
    s.push('"');
    s
}

/// The text on stdout. Err when a value cannot be written in all three
/// syntaxes (not UTF-8, or a control character such as a newline, which
/// neither a Dockerfile line nor a unit file line can hold).
pub fn render(
    info: &PinInfo,
    shim_path: &Path,
    per_user: bool,
    out: Option<&Path>,
) -> Result<String, String> {
    let text = |what: &str, p: &Path| -> Result<String, String> {
        let s = p
            .to_str()
            .ok_or_else(|| format!("{what} {} is not valid UTF-8", p.display()))?;
        if s.chars().any(char::is_control) {
            return Err(format!(
                "{what} {} holds a control character (a newline?), which a Dockerfile or a unit file cannot hold",
                p.display()
            ));
        }
        Ok(s.to_string())
    };
    let shim_s = text("the shim path", shim_path)?;
    let mut vars: Vec<(&str, String)> = vec![
        ("LD_AUDIT", shim_s.clone()),
        (envvar::PIN, text("the pin directory", &info.dir)?),
        (envvar::PIN_MODE, info.mode.as_str().to_string()),
    ];
    if let Some(o) = out {
        vars.push((envvar::OUT_DIR, text("the trace directory", o)?));
        vars.push(("LD_PRELOAD", shim_s.clone()));
    }

    let version = info
        .version
        .clone()
        .unwrap_or_else(|| info.major.to_string());
    let mut s = format!(
        "# cuDNN {version} pinned to {} ({} mode), by cudnn-trace {}\n",
        info.dir.display(),
        info.mode.as_str(),
        env!("CARGO_PKG_VERSION")
    );
    if per_user {
        s += &format!(
            "# LD_AUDIT names cudnn-trace's cached copy of the shim ({shim_s}),\n\
             # which other users and machines may not have: for production, install it at a\n\
             # stable path with cudnn-trace env --shim PATH ...\n"
        );
    }
    let preload = if out.is_some() { " and LD_PRELOAD" } else { "" };
    s += &format!(
        "# These lines replace LD_AUDIT{preload}: if you set your own, join them with ':'.\n"
    );
    if out.is_some() {
        s += "# CUDNN_TRACE_DIR and LD_PRELOAD also trace the processes into that directory.\n";
    }

    s += "\n# shell (sh, bash, zsh)\n";
    for (k, v) in &vars {
        s += &format!("export {k}={}\n", sh_quote(v));
    }

    s += "\n# Dockerfile\n";
    for (i, (k, v)) in vars.iter().enumerate() {
        let lead = if i == 0 { "ENV " } else { "    " };
        let cont = if i + 1 < vars.len() { " \\" } else { "" };
        s += &format!("{lead}{k}={}{cont}\n", docker_quote(v));
    }

    s += "\n# systemd unit (or a drop-in: systemctl edit UNIT)\n[Service]\n";
    for (k, v) in &vars {
        s += &format!("Environment={}\n", systemd_quote(k, v));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::pin::PinMode;
    use std::os::unix::fs::MetadataExt;

    fn info(dir: &str) -> PinInfo {
        PinInfo {
            dir: PathBuf::from(dir),
            mode: PinMode::Strict,
            major: 9,
            version: Some("9.19.0".into()),
            cuda_build: Some(13000),
            max_device: Some(1210),
            files: vec!["libcudnn.so.9".into()],
            warnings: Vec::new(),
        }
    }

    #[test]
    fn quoting() {
        assert_eq!(sh_quote("/opt/cudnn/lib"), "/opt/cudnn/lib");
        assert_eq!(sh_quote(""), "''");
        assert_eq!(sh_quote("/a b"), "'/a b'");
        assert_eq!(sh_quote("/it's"), r"'/it'\''s'");
        assert_eq!(sh_quote("/$HOME"), "'/$HOME'");
        assert_eq!(docker_quote("/a b"), "\"/a b\"");
        assert_eq!(docker_quote(r#"/q"d\$x"#), r#""/q\"d\\\$x""#);
        assert_eq!(systemd_quote("K", r#"/q"d\$x %h"#), r#""K=/q\"d\\$x %%h""#);
    }

    #[test]
    fn shell_block_survives_a_shell() {
        let weird = r#"/p dir/it's "q" $HOME %h \n*"#;
        let text = render(&info(weird), Path::new("/s/libcdtrace.so"), false, None).unwrap();
        let block: String = text
            .split("\n\n")
            .find(|b| b.starts_with("# shell"))
            .unwrap()
            .to_string();
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("{block}\nprintf '%s' \"$CUDNN_TRACE_PIN\""))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), weird);
    }

    #[test]
    fn whole_output() {
        let text = render(
            &info("/pin dir/lib"),
            Path::new("/c/libcdtrace.so"),
            true,
            Some(Path::new("/t 1")),
        )
        .unwrap();
        let v = env!("CARGO_PKG_VERSION");
        assert_eq!(
            text,
            format!(
                r#"# cuDNN 9.19.0 pinned to /pin dir/lib (strict mode), by cudnn-trace {v}
# LD_AUDIT names cudnn-trace's cached copy of the shim (/c/libcdtrace.so),
# which other users and machines may not have: for production, install it at a
# stable path with cudnn-trace env --shim PATH ...
# These lines replace LD_AUDIT and LD_PRELOAD: if you set your own, join them with ':'.
# CUDNN_TRACE_DIR and LD_PRELOAD also trace the processes into that directory.

# shell (sh, bash, zsh)
export LD_AUDIT=/c/libcdtrace.so
export CUDNN_TRACE_PIN='/pin dir/lib'
export CUDNN_TRACE_PIN_MODE=strict
export CUDNN_TRACE_DIR='/t 1'
export LD_PRELOAD=/c/libcdtrace.so

# Dockerfile
ENV LD_AUDIT="/c/libcdtrace.so" \
    CUDNN_TRACE_PIN="/pin dir/lib" \
    CUDNN_TRACE_PIN_MODE="strict" \
    CUDNN_TRACE_DIR="/t 1" \
    LD_PRELOAD="/c/libcdtrace.so"

# systemd unit (or a drop-in: systemctl edit UNIT)
[Service]
Environment="LD_AUDIT=/c/libcdtrace.so"
Environment="CUDNN_TRACE_PIN=/pin dir/lib"
Environment="CUDNN_TRACE_PIN_MODE=strict"
Environment="CUDNN_TRACE_DIR=/t 1"
Environment="LD_PRELOAD=/c/libcdtrace.so"
"#
            )
        );
        assert!(render(&info("/a\nb"), Path::new("/c/x.so"), false, None)
            .unwrap_err()
            .contains("control character"));
    }

    #[test]
    fn describes_the_directory() {
        let mut i = info("/p");
        assert_eq!(
            describe(&i),
            "/p: cuDNN 9.19.0 built with CUDA 13.0, 1 files; the pin is valid"
        );
        i.version = None;
        i.cuda_build = None;
        i.warnings = vec!["w".into(), "x".into()];
        assert_eq!(
            describe(&i),
            "/p: cuDNN 9 (exact version unknown), 1 files; the pin is valid (2 warnings)"
        );
    }

    #[test]
    fn installs_atomically_and_never_through_a_symlink() {
        let d = crate::testutil::tempdir("env-shim");
        let dest = d.join("new/dirs/libcdtrace.so");
        // A binary built without its shim cannot install one.
        match install_shim(&dest) {
            Ok(()) => {
                let md = fs::symlink_metadata(&dest).unwrap();
                assert!(md.is_file());
                assert_eq!(md.mode() & 0o7777, 0o644);
                assert_eq!(fs::read(&dest).unwrap(), shim::embedded().unwrap());
                // No temporary file left.
                assert_eq!(fs::read_dir(dest.parent().unwrap()).unwrap().count(), 1);
            }
            Err(e) => assert!(shim::embedded().is_none(), "{e}"),
        }
        let link = d.join("link.so");
        std::os::unix::fs::symlink(d.join("victim"), &link).unwrap();
        let e = install_shim(&link).unwrap_err();
        assert!(
            e.contains("is a symbolic link; not writing through it"),
            "{e}"
        );
        assert!(!d.join("victim").exists());
        let e = install_shim(&d).unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
    }
}
