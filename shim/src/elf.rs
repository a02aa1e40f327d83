//! What the shim reads about a loaded object.
//!
//! From memory (no system call, no allocation, safe to do for every object):
//! the SONAME, DT_RPATH, DT_RUNPATH and DT_NEEDED strings of a `link_map`,
//! and its symbols (`cdtrace_abi::elf`, shared with the preload helper).
//! From the file (a few `pread`s, done only for objects that get a full
//! record): identity and the GNU build-id.

use crate::lock::ForkSafeLock;
use std::collections::BTreeMap;
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

/// What [`file_info`] learnt about one file (device and inode), kept for
/// the process's life: a library is opened again and again (cuDNN opens its
/// sub-libraries in loops, programs load and unload), and its identity, real
/// path and build-id were about six system calls each time.
struct Known {
    /// `st_size`, `st_mtime` and `st_ctime` (ns) when it was read: a file
    /// rewritten in place keeps its inode but not these.
    stamp: (u64, i64, i64),
    build_id: Option<Vec<u8>>,
    /// The paths it was reached by, each with its real path.
    paths: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

/// Bounds of the cache: a program that opens more distinct files starts
/// it over (costing the reads again, never a wrong answer).
const KNOWN_FILES: usize = 4096;
const KNOWN_PATHS: usize = 16;

static KNOWN: ForkSafeLock<BTreeMap<(u64, u64), Known>> = ForkSafeLock::new(BTreeMap::new());

fn stamp(st: &libc::stat) -> (u64, i64, i64) {
    (
        st.st_size as u64,
        st.st_mtime * 1_000_000_000 + st.st_mtime_nsec,
        st.st_ctime * 1_000_000_000 + st.st_ctime_nsec,
    )
}

/// File identity, real path and build-id of `path`: one `stat` when the
/// file (device, inode, size and times) was read before by this path in
/// this process, else [`read_file_info`]. A file replaced at the same path
/// has another inode, one rewritten in place another time stamp: both are
/// read afresh. The cache is copied into a forked child, and right there too.
pub fn file_info(path: &[u8]) -> Option<FileInfo> {
    let st = stat(path)?;
    let key = (st.st_dev, st.st_ino);
    let now = stamp(&st);
    let hit = KNOWN.with(|k| {
        let known = k.get(&key).filter(|e| e.stamp == now)?;
        let (_, realpath) = known.paths.iter().find(|(p, _)| p == path)?;
        Some(FileInfo {
            realpath: realpath.clone(),
            dev: key.0,
            ino: key.1,
            size: now.0,
            build_id: known.build_id.clone(),
        })
    });
    if hit.is_some() {
        return hit;
    }
    let (fi, st) = read_file_info(path)?;
    let now = stamp(&st);
    KNOWN.with(|k| {
        if k.len() >= KNOWN_FILES {
            k.clear();
        }
        let e = k.entry((fi.dev, fi.ino)).or_insert_with(|| Known {
            stamp: now,
            build_id: None,
            paths: Vec::new(),
        });
        if e.stamp != now || e.paths.len() >= KNOWN_PATHS {
            e.paths.clear();
        }
        e.stamp = now;
        e.build_id = fi.build_id.clone();
        e.paths.retain(|(p, _)| p != path);
        e.paths.push((path.to_vec(), fi.realpath.clone()));
    });
    Some(fi)
}

/// File identity, real path and build-id from one open descriptor, read
/// with `pread` (never mapping the file: cuDNN engine libraries are hundreds
/// of megabytes). About six system calls. Also the descriptor's `stat`.
fn read_file_info(path: &[u8]) -> Option<(FileInfo, libc::stat)> {
    use std::os::unix::fs::FileExt;
    use std::os::unix::io::AsRawFd;
    let file = std::fs::File::open(std::ffi::OsStr::from_bytes(path)).ok()?;
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: our open descriptor and a stat buffer.
    if unsafe { libc::fstat(file.as_raw_fd(), &mut st) } != 0 {
        return None;
    }
    // The kernel's name for the open file is its resolved path: one
    // readlink instead of realpath(3)'s walk over every component.
    let realpath = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .ok()
        .map(|p| p.as_os_str().as_bytes().to_vec())
        .or_else(|| realpath(path));
    let mut fi = FileInfo {
        realpath,
        dev: st.st_dev,
        ino: st.st_ino,
        size: st.st_size as u64,
        build_id: None,
    };
    let mut eh = [0u8; 64];
    if file.read_exact_at(&mut eh, 0).is_err() || &eh[..4] != b"\x7fELF" || eh[4] != 2 {
        return Some((fi, st));
    }
    let rd16 = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as u64;
    let rd32 =
        |b: &[u8], o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap_or([0; 4])) as u64;
    let rd64 = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]));
    let (phoff, phentsize, phnum) = (rd64(&eh, 32), rd16(&eh, 54), rd16(&eh, 56));
    if phentsize < 56 || phnum == 0 || phnum > 512 {
        return Some((fi, st));
    }
    let mut ph = vec![0u8; (phentsize * phnum) as usize];
    if file.read_exact_at(&mut ph, phoff).is_err() {
        return Some((fi, st));
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
                return Some((fi, st));
            }
            o = next;
        }
    }
    Some((fi, st))
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
