//! An exec prepared before a fork, for a child that may not allocate: the
//! session leader ([`super::session`]) starts the program from one, as
//! `Command` would have (`argv[0]` as typed, the launcher's environment with
//! the traced variables, a file the kernel cannot execute handed to
//! `/bin/sh` as execvp does).

use super::env::ProgramEnv;
use super::Options;
use std::ffi::{CString, OsStr, OsString};
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Whether `file` is an ELF file (one the kernel refuses is then another
/// machine's, not a script for /bin/sh).
pub fn is_elf(file: &Path) -> bool {
    fs::File::open(file)
        .and_then(|mut f| {
            let mut magic = [0u8; 4];
            std::io::Read::read_exact(&mut f, &mut magic).map(|_| magic == *b"\x7fELF")
        })
        .unwrap_or(false)
}

/// Everything `execve` needs, made before the fork: between fork and exec
/// in a process with threads, nothing may allocate.
pub struct ExecPlan {
    file: CString,
    argv: CArray,
    /// For a file the kernel cannot execute: `/bin/sh FILE ARGS…`, as
    /// execvp does (not for an ELF file).
    shell: Option<CArray>,
    envp: CArray,
}

/// NUL-terminated strings and the NULL-terminated array of pointers to
/// them.
struct CArray {
    _strings: Vec<CString>,
    ptrs: Vec<*const libc::c_char>,
}

impl CArray {
    fn new<'a>(items: impl IntoIterator<Item = &'a OsStr>) -> io::Result<CArray> {
        let strings = items
            .into_iter()
            .map(|s| CString::new(s.as_bytes()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, "an argument holds a NUL byte")
            })?;
        let mut ptrs: Vec<*const libc::c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        Ok(CArray {
            _strings: strings,
            ptrs,
        })
    }
}

impl ExecPlan {
    /// The exec of `file` with `opts`' argv (`argv[0]` as typed) and the
    /// launcher's environment changed by `env`, as `Command` would do.
    pub fn new(opts: &Options, file: &Path, env: Option<&ProgramEnv>) -> io::Result<ExecPlan> {
        let mut vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        if let Some(env) = env {
            for (k, v) in &env.set {
                vars.retain(|(name, _)| name != k);
                vars.push((k.clone(), v.clone()));
            }
            vars.retain(|(name, _)| !env.remove.contains(name));
        }
        let entries: Vec<OsString> = vars
            .into_iter()
            .map(|(k, v)| {
                let mut e = k;
                e.push("=");
                e.push(v);
                e
            })
            .collect();
        let args = || {
            std::iter::once(opts.program.as_os_str())
                .chain(opts.args.iter().map(OsString::as_os_str))
        };
        let shell = if is_elf(file) {
            None
        } else {
            let mut items = vec![opts.program.as_os_str(), file.as_os_str()];
            items.extend(opts.args.iter().map(OsString::as_os_str));
            Some(CArray::new(items)?)
        };
        Ok(ExecPlan {
            file: CString::new(file.as_os_str().as_bytes()).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, "the path holds a NUL byte")
            })?,
            argv: CArray::new(args())?,
            shell,
            envp: CArray::new(entries.iter().map(OsString::as_os_str))?,
        })
    }

    /// Executes the program; returns only when that failed, with errno.
    ///
    /// # Safety
    /// Async-signal-safe: for the child of a fork.
    pub unsafe fn exec(&self) -> i32 {
        libc::execve(
            self.file.as_ptr(),
            self.argv.ptrs.as_ptr(),
            self.envp.ptrs.as_ptr(),
        );
        let mut err = *libc::__errno_location();
        if err == libc::ENOEXEC {
            if let Some(sh) = &self.shell {
                libc::execve(
                    c"/bin/sh".as_ptr(),
                    sh.ptrs.as_ptr(),
                    self.envp.ptrs.as_ptr(),
                );
                err = *libc::__errno_location();
            }
        }
        err
    }
}
