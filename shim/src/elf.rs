//! What the shim reads about a loaded object.
//!
//! From memory (no system call, no allocation, safe to do for every object):
//! the SONAME, DT_RPATH, DT_RUNPATH and DT_NEEDED strings of a `link_map`,
//! and its symbols (`cdtrace_abi::elf`, shared with the preload helper).
//! From the file (a few `pread`s, done only for objects that get a full
//! record): identity and the GNU build-id.

use std::os::unix::ffi::OsStrExt;

pub use cdtrace_abi::elf::{any_needed, dyn_string, l_name, lookup};

/// Identity of a file on disk.
pub struct FileInfo {
    /// The path with symlinks resolved (from the open descriptor).
    pub realpath: Option<Vec<u8>>,
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub build_id: Option<Vec<u8>>,
}

pub fn stat(path: &[u8]) -> Option<libc::stat> {
    let c = std::ffi::CString::new(path).ok()?;
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid C string and stat buffer.
    (unsafe { libc::stat(c.as_ptr(), &mut st) } == 0).then_some(st)
}

/// File identity, real path and build-id from one open descriptor, read
/// with `pread` (never mapping the file: cuDNN engine libraries are hundreds
/// of megabytes). About six system calls.
pub fn file_info(path: &[u8]) -> Option<FileInfo> {
    use std::os::unix::fs::FileExt;
    use std::os::unix::io::AsRawFd;
    let file = std::fs::File::open(std::ffi::OsStr::from_bytes(path)).ok()?;
    let meta = file.metadata().ok()?;
    use std::os::unix::fs::MetadataExt;
    // The kernel's name for the open file is its resolved path: one
    // readlink instead of realpath(3)'s walk over every component.
    let realpath = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .ok()
        .map(|p| p.as_os_str().as_bytes().to_vec())
        .or_else(|| realpath(path));
    let mut fi = FileInfo {
        realpath,
        dev: meta.dev(),
        ino: meta.ino(),
        size: meta.size(),
        build_id: None,
    };
    let mut eh = [0u8; 64];
    if file.read_exact_at(&mut eh, 0).is_err() || &eh[..4] != b"\x7fELF" || eh[4] != 2 {
        return Some(fi);
    }
    let rd16 = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as u64;
    let rd32 =
        |b: &[u8], o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap_or([0; 4])) as u64;
    let rd64 = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]));
    let (phoff, phentsize, phnum) = (rd64(&eh, 32), rd16(&eh, 54), rd16(&eh, 56));
    if phentsize < 56 || phnum == 0 || phnum > 512 {
        return Some(fi);
    }
    let mut ph = vec![0u8; (phentsize * phnum) as usize];
    if file.read_exact_at(&mut ph, phoff).is_err() {
        return Some(fi);
    }
    for i in 0..phnum as usize {
        let p = &ph[i * phentsize as usize..];
        const PT_NOTE: u64 = 4;
        if rd32(p, 0) != PT_NOTE {
            continue;
        }
        let (off, size) = (rd64(p, 8), rd64(p, 32));
        if size == 0 || size > 64 * 1024 {
            continue;
        }
        let mut notes = vec![0u8; size as usize];
        if file.read_exact_at(&mut notes, off).is_err() {
            continue;
        }
        let mut o = 0usize;
        while o + 12 <= notes.len() {
            let (namesz, descsz, ty) = (
                rd32(&notes, o) as usize,
                rd32(&notes, o + 4) as usize,
                rd32(&notes, o + 8),
            );
            let name_at = o + 12;
            let desc_at = name_at + namesz.div_ceil(4) * 4;
            let next = desc_at + descsz.div_ceil(4) * 4;
            if next > notes.len() {
                break;
            }
            const NT_GNU_BUILD_ID: u64 = 3;
            if ty == NT_GNU_BUILD_ID && &notes[name_at..name_at + namesz] == b"GNU\0" {
                fi.build_id = Some(notes[desc_at..desc_at + descsz].to_vec());
                return Some(fi);
            }
            o = next;
        }
    }
    Some(fi)
}

/// What a candidate path holds, from the loader's point of view.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Candidate {
    Missing,
    /// An ELF shared object of this process's class and machine.
    Loadable,
    /// Something the loader would pass over (other class or machine, not ELF, unreadable).
    Rejected,
}

pub fn classify(path: &[u8]) -> Candidate {
    use std::os::unix::fs::FileExt;
    // Most candidates do not exist: one stat settles those.
    if stat(path).is_none() {
        return Candidate::Missing;
    }
    let Ok(file) = std::fs::File::open(std::ffi::OsStr::from_bytes(path)) else {
        return Candidate::Rejected;
    };
    let mut eh = [0u8; 20];
    if file.read_exact_at(&mut eh, 0).is_err() || &eh[..4] != b"\x7fELF" {
        return Candidate::Rejected;
    }
    const EM_HOST: u16 = if cfg!(target_arch = "x86_64") {
        62
    } else {
        183
    };
    let class_ok = eh[4] == 2;
    let machine = u16::from_le_bytes([eh[18], eh[19]]);
    if class_ok && machine == EM_HOST {
        Candidate::Loadable
    } else {
        Candidate::Rejected
    }
}

pub fn hex(bytes: &[u8]) -> Vec<u8> {
    const H: &[u8; 16] = b"0123456789abcdef";
    bytes
        .iter()
        .flat_map(|b| [H[(b >> 4) as usize], H[(b & 15) as usize]])
        .collect()
}

/// `realpath(3)`, or None.
pub fn realpath(path: &[u8]) -> Option<Vec<u8>> {
    std::fs::canonicalize(std::ffi::OsStr::from_bytes(path))
        .ok()
        .map(|p| p.as_os_str().as_bytes().to_vec())
}

/// The address of the main namespace libc's default definition of `name`
/// (the program's libc), or 0; no dl* function is called.
pub fn main_libc_symbol(name: &[u8]) -> usize {
    // SAFETY: ld.so's list of the main namespace's objects; libc is loaded
    // and relocated before any code that asks runs, and never unloaded.
    unsafe {
        let m = cdtrace_abi::elf::main_libc();
        if m.is_null() {
            return 0;
        }
        lookup(m, name).unwrap_or(0)
    }
}
