//! `cudnn-trace env --pin DIR [--pin-mode M] [--shim PATH] [--out TRACE_DIR]`:
//! the pin without the launcher.
//!
//! Production services do not run under `cudnn-trace`; they get the pin from
//! their environment (`docs/pin.md`, "Environment"). This command validates
//! DIR exactly as the launcher does (findings on stderr) and prints the
//! variables to set, in three syntaxes: a shell, a Dockerfile and a systemd
//! unit, each quoted for its own rules.

use crate::args::EnvArgs;
use crate::machine::pin::{self};
use crate::model::{io_err, io_msg};
use crate::render::env::{describe, render};
use crate::shim;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

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
