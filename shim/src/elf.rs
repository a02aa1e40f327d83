//! What the shim reads about a loaded object.
//!
//! From memory (no system call, no allocation, safe to do for every object):
//! the SONAME, DT_RPATH, DT_RUNPATH and DT_NEEDED strings of a `link_map`.
//! From the file (a few `pread`s, done only for objects that get a full
//! record): identity and the GNU build-id.

use crate::sys::*;
use cudnn_trace_format::basename;
use std::ffi::CStr;
use std::os::unix::ffi::OsStrExt;

/// The object's name as the loader recorded it (`l_name`), in place.
///
/// # Safety
/// `map` must be a live `struct link_map` from the loader; the name lives as
/// long as the object.
pub unsafe fn l_name<'a>(map: *const LinkMap) -> &'a [u8] {
    let p = (*map).l_name;
    if p.is_null() {
        b""
    } else {
        CStr::from_ptr(p).to_bytes()
    }
}

/// The entries of a loaded object's dynamic section, in memory.
///
/// # Safety
/// `map` must be a live `struct link_map` whose dynamic section the loader
/// has already processed (true in and after `la_objopen`).
pub unsafe fn dyn_entries(map: *const LinkMap) -> impl Iterator<Item = (i64, u64)> {
    let mut d = (*map).l_ld;
    // The dynamic section of a real object is short; the bound only guards
    // against a corrupt one.
    (0..4096).map_while(move |_| {
        if d.is_null() || (*d).d_tag == DT_NULL {
            return None;
        }
        let e = *d;
        d = d.add(1);
        Some((e.d_tag, e.d_val))
    })
}

/// The run-time address of an address-valued dynamic entry (`d_ptr`).
///
/// glibc relocates those in place when the dynamic section is writable
/// (every ordinary object), but leaves them as file addresses for read-only
/// ones (the vDSO). File addresses of a shared object are small offsets, far
/// below its load address.
pub fn dyn_addr(l_addr: usize, d_ptr: u64) -> usize {
    let p = d_ptr as usize;
    if l_addr != 0 && p < l_addr {
        p + l_addr
    } else {
        p
    }
}

/// The string at `off` in the string table at `strtab`.
///
/// # Safety
/// `strtab` is a loaded object's DT_STRTAB address and `off` an offset from
/// its dynamic section.
unsafe fn dyn_str<'a>(strtab: usize, off: u64) -> &'a [u8] {
    CStr::from_ptr((strtab + off as usize) as *const libc::c_char).to_bytes()
}

/// The object's string table (DT_STRTAB), or `None`.
///
/// # Safety
/// As for [`dyn_entries`].
unsafe fn strtab(map: *const LinkMap) -> Option<usize> {
    dyn_entries(map)
        .find(|(t, _)| *t == DT_STRTAB)
        .map(|(_, v)| dyn_addr((*map).l_addr, v))
        .filter(|&a| a != 0)
}

/// The string of the object's dynamic entry `tag` (`DT_SONAME`,
/// `DT_RPATH`, `DT_RUNPATH`), in place; the last one if it repeats, as
/// glibc takes it.
///
/// # Safety
/// As for [`dyn_entries`]; the string lives as long as the object.
pub unsafe fn dyn_string<'a>(map: *const LinkMap, tag: i64) -> Option<&'a [u8]> {
    let strtab = strtab(map)?;
    dyn_entries(map)
        .filter(|(t, _)| *t == tag)
        .last()
        .map(|(_, v)| dyn_str(strtab, v))
}

/// Whether one of the object's DT_NEEDED entries satisfies `pred`, read in
/// place (this runs for every object the loader maps).
///
/// # Safety
/// As for [`dyn_entries`].
pub unsafe fn any_needed(map: *const LinkMap, pred: impl Fn(&[u8]) -> bool) -> bool {
    let Some(strtab) = strtab(map) else {
        return false;
    };
    dyn_entries(map).any(|(t, v)| t == DT_NEEDED && pred(dyn_str(strtab, v)))
}

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

// ---------------------------------------------------------------------------
// Symbol lookup without the loader

const DT_HASH: i64 = 4;
const DT_SYMTAB: i64 = 6;
const DT_GNU_HASH: i64 = 0x6fff_fef5;
const DT_VERSYM: i64 = 0x6fff_fff0;
const STT_FUNC: u8 = 2;

/// The address of `name`, a function defined by the loaded object `map`
/// itself (its default version), found in the object's own dynamic symbol
/// table through DT_GNU_HASH or DT_HASH; `None` when it has no such
/// definition.
///
/// This is how the shim reaches a library's functions without `dlsym`:
/// `dlsym` needs a handle (a start-up object's `link_map` is not a usable one,
/// `interposer-pitfalls.md` §3.4), would run `la_symbind` on our own lookup,
/// and any dl* call resets the program's pending `dlerror()` text.
///
/// # Safety
/// `map` is a live, relocated `struct link_map` from the loader.
pub unsafe fn lookup(map: *const LinkMap, name: &[u8]) -> Option<usize> {
    let base = (*map).l_addr;
    let addr = |p: u64| dyn_addr(base, p);
    let (mut symtab, mut strtab, mut gnu_hash, mut hash, mut versym) = (0, 0, 0, 0, 0);
    for (tag, val) in dyn_entries(map) {
        match tag {
            DT_SYMTAB => symtab = addr(val),
            DT_STRTAB => strtab = addr(val),
            DT_GNU_HASH => gnu_hash = addr(val),
            DT_HASH => hash = addr(val),
            DT_VERSYM => versym = addr(val),
            _ => {}
        }
    }
    if symtab == 0 || strtab == 0 {
        return None;
    }
    // Elf64_Sym: st_name u32, st_info u8, st_other u8, st_shndx u16,
    // st_value u64, st_size u64.
    let matches = |i: u32| -> Option<usize> {
        let sym = (symtab + 24 * i as usize) as *const u8;
        let st_name = core::ptr::read_unaligned(sym as *const u32) as usize;
        let st_info = *sym.add(4);
        let st_shndx = core::ptr::read_unaligned(sym.add(6) as *const u16);
        let st_value = core::ptr::read_unaligned(sym.add(8) as *const u64) as usize;
        if st_shndx == 0 || st_value == 0 || st_info & 0xf != STT_FUNC {
            return None;
        }
        // A hidden version (0x8000) is a compatibility alias, not the default.
        if versym != 0 && *(versym as *const u16).add(i as usize) & 0x8000 != 0 {
            return None;
        }
        let sname = CStr::from_ptr((strtab + st_name) as *const libc::c_char).to_bytes();
        (sname == name).then_some(base + st_value)
    };
    if gnu_hash != 0 {
        let h = name
            .iter()
            .fold(5381u32, |h, &c| h.wrapping_mul(33).wrapping_add(c as u32));
        let words = gnu_hash as *const u32;
        let (nbuckets, symoffset, bloom_size) = (*words, *words.add(1), *words.add(2));
        if nbuckets == 0 {
            return None;
        }
        // The bloom words are 64-bit on ELFCLASS64.
        let buckets = words.add(4 + 2 * bloom_size as usize);
        let chain = buckets.add(nbuckets as usize);
        let mut i = *buckets.add((h % nbuckets) as usize);
        if i < symoffset {
            return None;
        }
        loop {
            let ch = *chain.add((i - symoffset) as usize);
            if ch | 1 == h | 1 {
                if let Some(a) = matches(i) {
                    return Some(a);
                }
            }
            if ch & 1 != 0 {
                return None;
            }
            i += 1;
        }
    }
    if hash != 0 {
        // SysV hash: nbucket, nchain, buckets[nbucket], chains[nchain].
        let h = name.iter().fold(0u32, |h, &c| {
            let h = (h << 4).wrapping_add(c as u32);
            let g = h & 0xf000_0000;
            (h ^ (g >> 24)) & !g
        });
        let words = hash as *const u32;
        let (nbucket, nchain) = (*words, *words.add(1));
        if nbucket == 0 {
            return None;
        }
        let mut i = *words.add(2 + (h % nbucket) as usize);
        let mut steps = 0;
        while i != 0 && i < nchain && steps < nchain {
            if let Some(a) = matches(i) {
                return Some(a);
            }
            i = *words.add(2 + nbucket as usize + i as usize);
            steps += 1;
        }
    }
    None
}

#[repr(C)]
struct RDebug {
    r_version: libc::c_int,
    r_map: *mut LinkMap,
}

extern "C" {
    /// The dynamic linker's debugger interface (`<link.h>`): its `r_map`
    /// lists the main namespace's objects (from either copy of the shim: there
    /// is one ld.so for every namespace). Every glibc exports it.
    static _r_debug: RDebug;
}

/// The main namespace's C library (`libc.so.*`), or null.
pub fn main_libc() -> *mut LinkMap {
    // SAFETY: reading ld.so's list of the main namespace's objects, which
    // only grows or shrinks under the loader's lock; libc is never unloaded.
    unsafe {
        let mut m = (*core::ptr::addr_of!(_r_debug)).r_map;
        for _ in 0..4096 {
            if m.is_null() {
                break;
            }
            if basename(l_name(m)).starts_with(b"libc.so.") {
                return m;
            }
            m = (*m).l_next;
        }
    }
    core::ptr::null_mut()
}

/// The address of the main namespace libc's default definition of `name`
/// (the program's libc), or 0; no dl* function is called.
pub fn main_libc_symbol(name: &[u8]) -> usize {
    let m = main_libc();
    if m.is_null() {
        return 0;
    }
    // SAFETY: libc is loaded and relocated before any code that asks runs.
    unsafe { lookup(m, name) }.unwrap_or(0)
}
