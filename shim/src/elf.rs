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
    let fi = read_file_info(path, &st)?;
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

/// Real path and build-id of `path`, whose `stat` the caller just took (its
/// identity: the file the loader mapped was opened earlier still, so no
/// later read can rule out a replacement racing with the load). Four system
/// calls: open, readlink of the descriptor, one `pread` of the first
/// kilobyte (header, program headers and, as linkers lay them out, the
/// notes: glibc's at 0x350, most at 0x238) and close; more `pread`s only for
/// what lies beyond. Never maps the file:
/// cuDNN engine libraries are hundreds of megabytes.
fn read_file_info(path: &[u8], st: &libc::stat) -> Option<FileInfo> {
    use std::os::unix::io::AsRawFd;
    let file = std::fs::File::open(std::ffi::OsStr::from_bytes(path)).ok()?;
    // The kernel's name for the open file is its resolved path: one
    // readlink instead of realpath(3)'s walk over every component.
    let realpath = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .ok()
        .map(|p| p.as_os_str().as_bytes().to_vec())
        .or_else(|| realpath(path));
    Some(FileInfo {
        realpath,
        dev: st.st_dev,
        ino: st.st_ino,
        size: st.st_size as u64,
        build_id: build_id(&file),
    })
}

/// Bytes read at once from the start of a file.
const HEAD: usize = 1024;

/// The first kilobyte of a file, and what lies beyond it on demand.
struct Head<'a> {
    file: &'a std::fs::File,
    first: Vec<u8>,
}

impl Head<'_> {
    fn read(file: &std::fs::File) -> Option<Head<'_>> {
        use std::os::unix::fs::FileExt;
        let mut first = vec![0u8; HEAD];
        // One read: a regular file gives all it has up to the length asked.
        let n = file.read_at(&mut first, 0).ok()?;
        first.truncate(n);
        Some(Head { file, first })
    }

    /// `len` bytes at `off`: from the head, else read.
    fn bytes(&self, off: u64, len: usize) -> Option<std::borrow::Cow<'_, [u8]>> {
        use std::borrow::Cow;
        use std::os::unix::fs::FileExt;
        let end = off.checked_add(len as u64)?;
        if end <= self.first.len() as u64 {
            return Some(Cow::Borrowed(&self.first[off as usize..end as usize]));
        }
        let mut buf = vec![0u8; len];
        self.file.read_exact_at(&mut buf, off).ok()?;
        Some(Cow::Owned(buf))
    }
}

fn rd16(b: &[u8], o: usize) -> u64 {
    u16::from_le_bytes([b[o], b[o + 1]]) as u64
}

fn rd32(b: &[u8], o: usize) -> u64 {
    u32::from_le_bytes(b[o..o + 4].try_into().unwrap_or([0; 4])) as u64
}

fn rd64(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or([0; 8]))
}

/// The GNU build-id of the 64-bit ELF file `file`, from its PT_NOTE segments.
fn build_id(file: &std::fs::File) -> Option<Vec<u8>> {
    let head = Head::read(file)?;
    let eh = head.bytes(0, 64)?;
    if &eh[..4] != b"\x7fELF" || eh[4] != 2 {
        return None;
    }
    let (phoff, phentsize, phnum) = (rd64(&eh, 32), rd16(&eh, 54), rd16(&eh, 56));
    if phentsize < 56 || phnum == 0 || phnum > 512 {
        return None;
    }
    let ph = head.bytes(phoff, (phentsize * phnum) as usize)?;
    (0..phnum as usize).find_map(|i| {
        let p = &ph[i * phentsize as usize..];
        const PT_NOTE: u64 = 4;
        let (off, size) = (rd64(p, 8), rd64(p, 32));
        if rd32(p, 0) != PT_NOTE || size == 0 || size > 64 * 1024 {
            return None;
        }
        gnu_build_id(&head.bytes(off, size as usize)?)
    })
}

/// The descriptor of the NT_GNU_BUILD_ID note among `notes`.
fn gnu_build_id(notes: &[u8]) -> Option<Vec<u8>> {
    let mut o = 0usize;
    while o + 12 <= notes.len() {
        let (namesz, descsz, ty) = (
            rd32(notes, o) as usize,
            rd32(notes, o + 4) as usize,
            rd32(notes, o + 8),
        );
        let name_at = o + 12;
        let desc_at = name_at + namesz.div_ceil(4) * 4;
        let next = desc_at + descsz.div_ceil(4) * 4;
        if next > notes.len() {
            return None;
        }
        const NT_GNU_BUILD_ID: u64 = 3;
        if ty == NT_GNU_BUILD_ID && &notes[name_at..name_at + namesz] == b"GNU\0" {
            return Some(notes[desc_at..desc_at + descsz].to_vec());
        }
        o = next;
    }
    None
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
    let machine = rd16(&eh, 18) as u16;
    if class_ok && machine == EM_HOST {
        Candidate::Loadable
    } else {
        Candidate::Rejected
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A 64-bit ELF file with one PT_NOTE segment at `at` holding `notes`.
    fn elf_with_notes(at: u64, notes: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; at as usize + notes.len()];
        f[..4].copy_from_slice(b"\x7fELF");
        f[4] = 2; // ELFCLASS64
        f[32..40].copy_from_slice(&64u64.to_le_bytes()); // e_phoff
        f[54..56].copy_from_slice(&56u16.to_le_bytes()); // e_phentsize
        f[56..58].copy_from_slice(&1u16.to_le_bytes()); // e_phnum
        let ph = &mut f[64..120];
        ph[..4].copy_from_slice(&4u32.to_le_bytes()); // PT_NOTE
        ph[8..16].copy_from_slice(&at.to_le_bytes()); // p_offset
        ph[32..40].copy_from_slice(&(notes.len() as u64).to_le_bytes()); // p_filesz
        f[at as usize..].copy_from_slice(notes);
        f
    }

    fn note(ty: u32, name: &[u8], desc: &[u8]) -> Vec<u8> {
        let mut n = Vec::new();
        n.extend_from_slice(&(name.len() as u32).to_le_bytes());
        n.extend_from_slice(&(desc.len() as u32).to_le_bytes());
        n.extend_from_slice(&ty.to_le_bytes());
        for part in [name, desc] {
            n.extend_from_slice(part);
            n.resize(n.len().div_ceil(4) * 4, 0);
        }
        n
    }

    fn build_id_of(bytes: &[u8]) -> Option<Vec<u8>> {
        let dir = std::env::temp_dir().join(format!("cdt-elf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("lib{}.so", bytes.len()));
        std::fs::write(&path, bytes).unwrap();
        let id = build_id(&std::fs::File::open(&path).unwrap());
        std::fs::remove_file(&path).unwrap();
        id
    }

    #[test]
    fn build_id_in_the_head_or_beyond_it() {
        let id = [0xabu8; 20];
        let notes = [note(1, b"GNU\0", &[1, 2, 3, 4]), note(3, b"GNU\0", &id)].concat();
        // Where linkers put it (one read), and past the head (more).
        for at in [0x238, 3 * 4096 + 8] {
            assert_eq!(
                build_id_of(&elf_with_notes(at, &notes)),
                Some(id.to_vec()),
                "{at}"
            );
        }
        // A note straddling the head's end is read whole.
        assert_eq!(
            build_id_of(&elf_with_notes(HEAD as u64 - 20, &notes)),
            Some(id.to_vec())
        );
    }

    #[test]
    fn no_build_id_without_a_gnu_note() {
        let other = note(3, b"XYZ\0", &[7; 20]);
        assert_eq!(build_id_of(&elf_with_notes(0x238, &other)), None);
        // Cut short: the segment runs past the end of the file.
        let mut cut = elf_with_notes(0x238, &note(3, b"GNU\0", &[7; 20]));
        cut.truncate(0x238 + 8);
        assert_eq!(build_id_of(&cut), None);
        assert_eq!(build_id_of(b"not an ELF file"), None);
    }
}
