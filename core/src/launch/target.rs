//! The program to run: finding it like `execvp` does, and telling in advance
//! whether the dynamic loader will take the shim into it.

use crate::model::elf;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Why the program cannot be started; `code` is the exit status to use.
#[derive(Debug, PartialEq, Eq)]
pub struct NotRunnable {
    pub code: i32,
    pub message: String,
}

/// glibc's default search path when PATH is unset (`confstr(_CS_PATH)`).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

fn executable(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: valid C string.
    unsafe { libc::access(c.as_ptr(), libc::X_OK) == 0 }
}

/// Checks one candidate: Ok(()) when it can be executed, else the errno-like
/// reason (ENOENT for "not there").
fn check(path: &Path) -> Result<(), i32> {
    match fs::metadata(path) {
        Err(e) => Err(e.raw_os_error().unwrap_or(libc::ENOENT)),
        Ok(md) if md.is_dir() => Err(libc::EISDIR),
        Ok(_) if !executable(path) => Err(libc::EACCES),
        Ok(_) => Ok(()),
    }
}

/// Resolves PROGRAM like `execvp`: a name with a slash is used as is, a bare
/// name is searched in PATH (an empty entry is the current directory); a
/// file found but not executable is remembered and the search goes on.
pub fn resolve(program: &OsStr, path_var: Option<&OsStr>) -> Result<PathBuf, NotRunnable> {
    let shown = program.to_string_lossy();
    if program.as_bytes().contains(&b'/') {
        let p = PathBuf::from(program);
        return match check(&p) {
            Ok(()) => Ok(p),
            Err(libc::ENOENT) | Err(libc::ENOTDIR) => Err(NotRunnable {
                code: 127,
                message: format!("{shown}: No such file or directory"),
            }),
            Err(libc::EISDIR) => Err(NotRunnable {
                code: 126,
                message: format!("{shown}: Is a directory"),
            }),
            Err(e) => Err(NotRunnable {
                code: 126,
                message: format!(
                    "{shown}: cannot execute: {}",
                    std::io::Error::from_raw_os_error(e)
                ),
            }),
        };
    }
    let search = path_var
        .map(OsStr::to_os_string)
        .unwrap_or_else(|| OsString::from(DEFAULT_PATH));
    let mut denied: Option<(PathBuf, i32)> = None;
    for dir in search.as_bytes().split(|&c| c == b':') {
        let dir = if dir.is_empty() {
            OsStr::new(".")
        } else {
            OsStr::from_bytes(dir)
        };
        let cand = Path::new(dir).join(program);
        match check(&cand) {
            Ok(()) => return Ok(cand),
            Err(e @ (libc::EACCES | libc::EISDIR)) => {
                denied.get_or_insert((cand, e));
            }
            Err(_) => {}
        }
    }
    match denied {
        Some((p, e)) => Err(NotRunnable {
            code: 126,
            message: format!(
                "{shown}: found {} but cannot execute it: {}",
                p.display(),
                if e == libc::EISDIR {
                    "it is a directory".to_string()
                } else {
                    "permission denied".to_string()
                }
            ),
        }),
        None => Err(NotRunnable {
            code: 127,
            message: format!("{shown}: command not found"),
        }),
    }
}

/// What the start of an executable file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Elf(ElfInfo),
    /// `#!` script with its interpreter.
    Script(String),
    /// Anything else (the kernel refuses it; execvp hands it to /bin/sh).
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElfInfo {
    pub class64: bool,
    pub machine: u16,
    /// Has a PT_INTERP program header (dynamically linked).
    pub interp: bool,
    /// Program headers could not be read (PN_XNUM, truncated file, …).
    pub unknown: bool,
}

/// Reads the ELF header and program headers, or the `#!` line.
pub fn kind(path: &Path) -> std::io::Result<Kind> {
    let mut f = fs::File::open(path)?;
    let head = elf::read_head(&mut f, 256)?;
    if head.starts_with(b"#!") {
        let line = head[2..].split(|&c| c == b'\n').next().unwrap_or(&[]);
        let interp = line
            .split(|c| c.is_ascii_whitespace())
            .find(|t| !t.is_empty())
            .unwrap_or(&[]);
        return Ok(Kind::Script(String::from_utf8_lossy(interp).into_owned()));
    }
    let Some((e, machine)) = elf::Elf::ident(&head)
        .filter(|_| head.len() >= 52)
        .and_then(|e| Some((e, e.u16(&head, 18)?)))
    else {
        return Ok(Kind::Other);
    };
    let mut info = ElfInfo {
        class64: e.class64,
        machine,
        interp: false,
        unknown: false,
    };
    let Some(h) = elf::Header::parse(&head) else {
        // An ELF64 file shorter than its header.
        info.unknown = true;
        return Ok(Kind::Elf(info));
    };
    // No program headers at all: nothing asks for an interpreter.
    if h.phnum != 0 {
        match elf::segments(&mut f, &h) {
            Some(segs) => info.interp = segs.iter().any(|s| s.p_type == elf::PT_INTERP),
            None => info.unknown = true,
        }
    }
    Ok(Kind::Elf(info))
}

/// ELF class and machine of the shim, to compare with the program's.
pub fn shim_arch(shim: &Path) -> Option<(bool, u16)> {
    match kind(shim) {
        Ok(Kind::Elf(e)) => Some((e.class64, e.machine)),
        _ => None,
    }
}

/// Whether a file is the dynamic loader itself (run directly, it honours
/// LD_PRELOAD/LD_AUDIT though it has no PT_INTERP).
fn is_dynamic_loader(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (name.starts_with("ld-") || name.starts_with("ld.so") || name.starts_with("ld64.so"))
        && name.contains(".so")
}

fn mounted_nosuid(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: zeroed statvfs is a valid out-parameter; c is a valid C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    rc == 0 && st.f_flag & libc::ST_NOSUID != 0
}

fn has_file_capabilities(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: valid C strings; a null buffer of size 0 asks for the size only.
    let n = unsafe {
        libc::getxattr(
            c.as_ptr(),
            c"security.capability".as_ptr(),
            std::ptr::null_mut(),
            0,
        )
    };
    n > 0
}

/// Why the loader will run this program in secure-execution mode (setuid,
/// setgid, file capabilities), if it will.
pub fn secure_exec(path: &Path) -> Option<String> {
    let md = fs::metadata(path).ok()?;
    // SAFETY: getuid/getgid have no preconditions.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let mode = md.mode();
    let why = if mode & libc::S_ISUID != 0 && md.uid() != uid {
        format!("it is setuid (owner uid {})", md.uid())
    } else if mode & libc::S_ISGID != 0 && md.gid() != gid {
        format!("it is setgid (group gid {})", md.gid())
    } else if uid != 0 && has_file_capabilities(path) {
        "it has file capabilities".to_string()
    } else {
        return None;
    };
    if mounted_nosuid(path) {
        return None;
    }
    Some(why)
}

/// The one warning to print when the program cannot be traced, or None.
/// `shim`: (ELF class 64, machine) of the shim.
pub fn untraceable(path: &Path, shim: Option<(bool, u16)>) -> Option<String> {
    let what = path.display();
    let elf_problem = |p: &Path, e: &ElfInfo, role: &str| -> Option<String> {
        if !e.interp && !e.unknown && !is_dynamic_loader(p) {
            return Some(format!(
                "{role}{} is statically linked (no ELF interpreter): the dynamic loader never runs in it, \
                 so LD_AUDIT/LD_PRELOAD cannot inject the tracer",
                p.display()
            ));
        }
        if let Some((c64, m)) = shim {
            if (e.class64, e.machine) != (c64, m) {
                return Some(format!(
                    "{role}{} is a {} program and the tracer is {}: the loader cannot load it there \
                     (expect a \"wrong ELF class\" message from ld.so)",
                    p.display(),
                    elf::arch_name(e.class64, e.machine),
                    elf::arch_name(c64, m)
                ));
            }
        }
        None
    };
    if let Some(why) = secure_exec(path) {
        return Some(format!(
            "{what}: {why}, so the loader runs it in secure-execution mode, which ignores LD_AUDIT \
             and LD_PRELOAD entries with a '/': it cannot be traced"
        ));
    }
    match kind(path).ok()? {
        Kind::Elf(e) => elf_problem(path, &e, ""),
        Kind::Script(interp) if interp.starts_with('/') => {
            let ip = Path::new(&interp);
            match kind(ip).ok()? {
                Kind::Elf(e) => {
                    elf_problem(ip, &e, &format!("{what} is a script whose interpreter "))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::tempdir;
    use std::os::unix::fs::PermissionsExt;

    fn mk(dir: &Path, name: &str, mode: u32, content: &[u8]) -> PathBuf {
        let p = dir.join(name);
        fs::write(&p, content).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn resolves_like_execvp() {
        let d = tempdir("resolve");
        let a = d.join("a");
        let b = d.join("b");
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        mk(&a, "tool", 0o644, b"#!/bin/sh\n");
        mk(&b, "tool", 0o755, b"#!/bin/sh\n");
        mk(&a, "noexec", 0o644, b"#!/bin/sh\n");
        fs::create_dir_all(a.join("adir")).unwrap();
        let path = std::env::join_paths([&a, &b]).unwrap();
        // Not executable in a: the search goes on to b (root may execute a's
        // copy only when some x bit is set, which it is not).
        assert_eq!(
            resolve(OsStr::new("tool"), Some(&path)).unwrap(),
            b.join("tool")
        );
        let e = resolve(OsStr::new("missing-xyz"), Some(&path)).unwrap_err();
        assert_eq!(e.code, 127);
        assert_eq!(e.message, "missing-xyz: command not found");
        let e = resolve(OsStr::new("noexec"), Some(&path)).unwrap_err();
        assert_eq!(e.code, 126, "{e:?}");
        let e = resolve(OsStr::new("adir"), Some(&path)).unwrap_err();
        assert_eq!(e.code, 126);
        // With a slash: no search.
        let p = b.join("tool");
        assert_eq!(resolve(p.as_os_str(), Some(OsStr::new(""))).unwrap(), p);
        let e = resolve(a.join("nope").as_os_str(), None).unwrap_err();
        assert_eq!(e.code, 127);
        let e = resolve(a.join("noexec").as_os_str(), None).unwrap_err();
        assert_eq!(e.code, 126);
        let e = resolve(a.as_os_str(), None).unwrap_err();
        assert_eq!(e.code, 126);
        // An empty PATH entry is the current directory.
        let found = resolve(OsStr::new("sh"), Some(OsStr::new("/nonexistent::/bin")));
        assert!(found.is_ok());
    }

    #[test]
    fn elf_and_script_kinds() {
        // The test binary itself is a dynamic ELF.
        let me = std::env::current_exe().unwrap();
        match kind(&me).unwrap() {
            Kind::Elf(e) => {
                assert!(e.interp, "{e:?}");
                assert_eq!(e.class64, cfg!(target_pointer_width = "64"));
            }
            k => panic!("{k:?}"),
        }
        assert_eq!(untraceable(&me, shim_arch(&me)), None);
        let d = tempdir("kinds");
        let s = mk(&d, "s.sh", 0o755, b"#!/usr/bin/env python3 -u\nprint()\n");
        assert_eq!(kind(&s).unwrap(), Kind::Script("/usr/bin/env".into()));
        let o = mk(&d, "o", 0o755, b"echo hi\n");
        assert_eq!(kind(&o).unwrap(), Kind::Other);
        // A minimal static ELF header: 64-bit LE x86-64, one PT_LOAD.
        let mut elf = vec![0u8; 64 + 56];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf[16] = 2; // ET_EXEC
        elf[18] = 62;
        elf[32] = 64; // e_phoff
        elf[54] = 56; // e_phentsize
        elf[56] = 1; // e_phnum
        elf[64] = 1; // PT_LOAD
        let st = mk(&d, "static", 0o755, &elf);
        match kind(&st).unwrap() {
            Kind::Elf(e) => assert!(!e.interp && !e.unknown && e.class64 && e.machine == 62),
            k => panic!("{k:?}"),
        }
        let w = untraceable(&st, Some((true, 62))).unwrap();
        assert!(w.contains("statically linked"), "{w}");
        // Same header with PT_INTERP: dynamic.
        elf[64] = 3;
        let dy = mk(&d, "dyn", 0o755, &elf);
        assert_eq!(untraceable(&dy, Some((true, 62))), None);
        // 32-bit program, 64-bit shim.
        let w = untraceable(&dy, Some((false, 3))).unwrap();
        assert!(
            w.contains("64-bit x86-64 program and the tracer is 32-bit i386"),
            "{w}"
        );
        // A script whose interpreter is static.
        let sc = mk(&d, "sc", 0o755, format!("#!{}\n", st.display()).as_bytes());
        let w = untraceable(&sc, Some((true, 62))).unwrap();
        assert!(w.contains("is a script whose interpreter"), "{w}");
    }

    #[test]
    fn setuid_detection() {
        let d = tempdir("setuid");
        let p = mk(&d, "su", 0o755, b"#!/bin/sh\n");
        // Owned by us: the bit changes nothing, no secure mode.
        fs::set_permissions(&p, fs::Permissions::from_mode(0o4755)).unwrap();
        assert_eq!(secure_exec(&p), None);
        // A setuid binary owned by someone else, when the system has one.
        for cand in ["/usr/bin/passwd", "/bin/su", "/usr/bin/su"] {
            let c = Path::new(cand);
            let Ok(md) = fs::metadata(c) else { continue };
            // SAFETY: getuid has no preconditions.
            if md.mode() & libc::S_ISUID != 0 && md.uid() != unsafe { libc::getuid() } {
                let w = untraceable(c, None).unwrap();
                assert!(w.contains("secure-execution"), "{w}");
            }
        }
    }
}
