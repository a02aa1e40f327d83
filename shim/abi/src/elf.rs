//! Reading loaded objects in place: `struct link_map`, the dynamic section,
//! the dynamic symbol table (`<link.h>`, `<elf.h>`, rtld-audit(7)).
//!
//! Nothing here makes a system call, allocates, or calls into the loader: it
//! runs in `la_objopen` for every object, and in the preload helper before
//! the program's libc may be called.

use core::ffi::c_char;

/// The public prefix of glibc's `struct link_map` (`<link.h>`). A `dlopen`
/// handle in glibc is a pointer to this structure, and rtld-audit callbacks
/// receive it; only these five fields are ABI.
#[repr(C)]
pub struct LinkMap {
    /// Difference between the addresses in the ELF file and in memory.
    pub l_addr: usize,
    /// Absolute (or as-given) file name; empty for the main program.
    pub l_name: *const c_char,
    /// The dynamic section, in memory.
    pub l_ld: *const Dyn,
    pub l_next: *mut LinkMap,
    pub l_prev: *mut LinkMap,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Dyn {
    pub d_tag: i64,
    pub d_val: u64,
}

pub const DT_NULL: i64 = 0;
pub const DT_NEEDED: i64 = 1;
pub const DT_HASH: i64 = 4;
pub const DT_STRTAB: i64 = 5;
pub const DT_SYMTAB: i64 = 6;
pub const DT_INIT: i64 = 12;
pub const DT_FINI: i64 = 13;
pub const DT_SONAME: i64 = 14;
pub const DT_RPATH: i64 = 15;
pub const DT_RUNPATH: i64 = 29;
pub const DT_GNU_HASH: i64 = 0x6fff_fef5;
pub const DT_VERSYM: i64 = 0x6fff_fff0;

/// `STT_OBJECT` and `STT_FUNC` (`<elf.h>`): which kind of symbol [`lookup`] wants.
pub const STT_OBJECT: u8 = 1;
pub const STT_FUNC: u8 = 2;

/// glibc's `struct dl_find_object` (2.35+, `<dlfcn.h>`).
#[repr(C)]
pub struct DlFindObject {
    pub dlfo_flags: u64,
    pub dlfo_map_start: *mut core::ffi::c_void,
    pub dlfo_map_end: *mut core::ffi::c_void,
    pub dlfo_link_map: *mut LinkMap,
    pub dlfo_eh_frame: *mut core::ffi::c_void,
    pub reserved: [u64; 7],
}

/// `Dl_info` (`<dlfcn.h>`), for `dladdr1`.
#[repr(C)]
pub struct DlInfo {
    pub dli_fname: *const c_char,
    pub dli_fbase: *mut core::ffi::c_void,
    pub dli_sname: *const c_char,
    pub dli_saddr: *mut core::ffi::c_void,
}

/// `dladdr1` flag asking for the `struct link_map *`.
pub const RTLD_DL_LINKMAP: i32 = 2;

/// The object's name as the loader recorded it (`l_name`), in place.
///
/// # Safety
/// `map` must be a live `struct link_map` from the loader; the name lives as
/// long as the object.
pub unsafe fn l_name<'a>(map: *const LinkMap) -> &'a [u8] {
    c_bytes((*map).l_name)
}

/// The bytes of the NUL-terminated string at `p` (empty for null), without
/// `strlen` (the preload helper links no libc). Strings longer than 1 MiB
/// are cut there: no name the loader keeps is anywhere near.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string that outlives `'a`.
pub unsafe fn c_bytes<'a>(p: *const c_char) -> &'a [u8] {
    if p.is_null() {
        return b"";
    }
    let mut n = 0usize;
    while n < 1 << 20 && *p.add(n) != 0 {
        n += 1;
    }
    core::slice::from_raw_parts(p.cast(), n)
}

/// The entries of a loaded object's dynamic section, in memory.
///
/// # Safety
/// `map` must be a live `struct link_map` whose dynamic section the loader
/// has already processed (true in and after `la_objopen`).
pub unsafe fn dyn_entries(map: *const LinkMap) -> impl Iterator<Item = (i64, u64)> {
    dyn_entries_at((*map).l_ld)
}

/// The entries of the dynamic section at `d` in memory (an object's
/// `l_ld`, or its PT_DYNAMIC address when only its program headers are at
/// hand).
///
/// # Safety
/// `d` is null or a loaded object's dynamic section.
pub unsafe fn dyn_entries_at(mut d: *const Dyn) -> impl Iterator<Item = (i64, u64)> {
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
        p.wrapping_add(l_addr)
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
    c_bytes(strtab.wrapping_add(off as usize) as *const c_char)
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

/// Whether the object has a dynamic entry `tag`.
///
/// # Safety
/// As for [`dyn_entries`].
pub unsafe fn has_dyn(map: *const LinkMap, tag: i64) -> bool {
    dyn_entries(map).any(|(t, _)| t == tag)
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

/// The address of `name`, a function (`STT_FUNC`) defined by the loaded
/// object `map` itself (its default version), found in the object's own
/// dynamic symbol table; `None` when it has no such definition.
///
/// This is how the shim reaches a library's functions without `dlsym`:
/// `dlsym` needs a handle (a start-up object's `link_map` is not a usable
/// one: its `l_searchlist` stays empty until it is `dlopen`ed, glibc
/// `elf/dl-open.c`, `dl_open_worker`), would run `la_symbind` on our own
/// lookup, and any dl* call resets the program's pending `dlerror()` text.
///
/// # Safety
/// `map` is a live `struct link_map` from the loader, at least mapped
/// (`la_objopen`): the symbol and hash tables are read-only data of the
/// object and are there before relocation.
pub unsafe fn lookup(map: *const LinkMap, name: &[u8]) -> Option<usize> {
    lookup_kind(map, name, STT_FUNC)
}

/// As [`lookup`], for a symbol of type `kind` ([`STT_FUNC`] or [`STT_OBJECT`]).
///
/// # Safety
/// As for [`lookup`].
pub unsafe fn lookup_kind(map: *const LinkMap, name: &[u8], kind: u8) -> Option<usize> {
    Symbols::of(map)?.find(name, kind)
}

/// A loaded object's dynamic symbol table, read from its dynamic section
/// once for any number of lookups.
#[derive(Clone, Copy)]
pub struct Symbols {
    base: usize,
    symtab: usize,
    strtab: usize,
    gnu_hash: usize,
    hash: usize,
    versym: usize,
}

impl Symbols {
    /// # Safety
    /// As for [`lookup`].
    pub unsafe fn of(map: *const LinkMap) -> Option<Symbols> {
        let base = (*map).l_addr;
        let addr = |p: u64| dyn_addr(base, p);
        let mut t = Symbols {
            base,
            symtab: 0,
            strtab: 0,
            gnu_hash: 0,
            hash: 0,
            versym: 0,
        };
        for (tag, val) in dyn_entries(map) {
            match tag {
                DT_SYMTAB => t.symtab = addr(val),
                DT_STRTAB => t.strtab = addr(val),
                DT_GNU_HASH => t.gnu_hash = addr(val),
                DT_HASH => t.hash = addr(val),
                DT_VERSYM => t.versym = addr(val),
                _ => {}
            }
        }
        (t.symtab != 0 && t.strtab != 0).then_some(t)
    }

    /// The address of the default definition of `name`, of type `kind`.
    ///
    /// # Safety
    /// The object read by [`Symbols::of`] is still mapped.
    pub unsafe fn find(&self, name: &[u8], kind: u8) -> Option<usize> {
        let Symbols {
            base,
            symtab,
            strtab,
            gnu_hash,
            hash,
            versym,
        } = *self;
        // Elf64_Sym: st_name u32, st_info u8, st_other u8, st_shndx u16,
        // st_value u64, st_size u64.
        let matches = |i: u32| -> Option<usize> {
            let sym = symtab.wrapping_add(24 * i as usize) as *const u8;
            let st_name = core::ptr::read_unaligned(sym as *const u32) as usize;
            let st_info = *sym.add(4);
            let st_shndx = core::ptr::read_unaligned(sym.add(6) as *const u16);
            let st_value = core::ptr::read_unaligned(sym.add(8) as *const u64) as usize;
            if st_shndx == 0 || st_value == 0 || st_info & 0xf != kind {
                return None;
            }
            // A hidden version (0x8000) is a compatibility alias, not the default.
            if versym != 0 && *(versym as *const u16).add(i as usize) & 0x8000 != 0 {
                return None;
            }
            let sname = c_bytes(strtab.wrapping_add(st_name) as *const c_char);
            (bytes_eq(sname, name)).then_some(base.wrapping_add(st_value))
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
            // The bloom filter (64-bit words on ELFCLASS64) settles most misses
            // without touching the chains.
            let bloom_shift = *words.add(3);
            let bloom = words.add(4) as *const u64;
            if bloom_size != 0 {
                let word = *bloom.add(((h / 64) % bloom_size) as usize);
                let mask = (1u64 << (h % 64)) | (1u64 << ((h >> (bloom_shift % 32)) % 64));
                if word & mask != mask {
                    return None;
                }
            }
            let buckets = words.add(4 + 2 * bloom_size as usize);
            let chain = buckets.add(nbuckets as usize);
            let mut i = *buckets.add((h % nbuckets) as usize);
            if i < symoffset {
                return None;
            }
            // Bounded like the dynamic section: a corrupt table cannot loop.
            for _ in 0..1 << 24 {
                let ch = *chain.add((i - symoffset) as usize);
                if ch | 1 == h | 1 {
                    if let Some(a) = matches(i) {
                        return Some(a);
                    }
                }
                if ch & 1 != 0 {
                    return None;
                }
                i = i.wrapping_add(1);
            }
            return None;
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
}

/// Byte-slice equality without `memcmp` (the preload helper links no libc).
#[inline]
pub fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The part of a path after its last `/`.
pub fn basename(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&c| c == b'/') {
        Some(i) => path.get(i + 1..).unwrap_or(b""),
        None => path,
    }
}

#[repr(C)]
struct RDebug {
    r_version: core::ffi::c_int,
    r_map: *mut LinkMap,
}

extern "C" {
    /// The dynamic linker's debugger interface (`<link.h>`): its `r_map`
    /// lists the main namespace's objects (the same list from any
    /// namespace: there is one ld.so). Every glibc's ld.so exports it, so a
    /// library that needs no other library can still find the program's.
    static _r_debug: RDebug;
}

/// The main namespace's objects, in load order (the main program first):
/// the order of its global scope for the start-up objects.
///
/// # Safety
/// Reads ld.so's list, which only grows at the tail or loses objects under
/// the loader's lock. Objects loaded at start-up, which come first, are
/// never unloaded; callers stop at the first hit.
pub unsafe fn main_namespace() -> impl Iterator<Item = *mut LinkMap> {
    let mut m = (*core::ptr::addr_of!(_r_debug)).r_map;
    (0..4096).map_while(move |_| {
        if m.is_null() {
            return None;
        }
        let cur = m;
        m = (*m).l_next;
        Some(cur)
    })
}

/// The first definition of function `name` in the main namespace, in the
/// order of its objects, leaving out `skip` (the caller's own object): what
/// the program's own call of `name` would reach, for the functions libc
/// (or, before glibc 2.34, libdl and libpthread) defines. 0 when none.
///
/// # Safety
/// As for [`main_namespace`].
pub unsafe fn program_symbol(name: &[u8], skip: *const LinkMap) -> usize {
    main_namespace()
        .filter(|&m| !core::ptr::eq(m, skip))
        .find_map(|m| lookup(m, name))
        .unwrap_or(0)
}

/// The main namespace's C library (`libc.so.*`), or null.
///
/// # Safety
/// As for [`main_namespace`].
pub unsafe fn main_libc() -> *mut LinkMap {
    main_namespace()
        .find(|&m| basename(l_name(m)).starts_with(b"libc.so."))
        .unwrap_or(core::ptr::null_mut())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basenames_and_addresses() {
        assert_eq!(basename(b"/a/b/libc.so.6"), b"libc.so.6");
        assert_eq!(basename(b"libc.so.6"), b"libc.so.6");
        assert_eq!(basename(b"/a/b/"), b"");
        assert!(bytes_eq(b"abc", b"abc"));
        assert!(!bytes_eq(b"abc", b"abd"));
        assert!(!bytes_eq(b"abc", b"ab"));
        assert_eq!(dyn_addr(0x7f00_0000_0000, 0x1000), 0x7f00_0000_1000);
        assert_eq!(
            dyn_addr(0x7f00_0000_0000, 0x7f00_0000_1000),
            0x7f00_0000_1000
        );
    }

    #[test]
    fn finds_libc_functions_in_this_process() {
        // SAFETY: this test process's own link map.
        unsafe {
            let libc = main_libc();
            assert!(!libc.is_null());
            let getpid = lookup(libc, b"getpid").expect("getpid in libc");
            let f: extern "C" fn() -> i32 = core::mem::transmute(getpid);
            assert_eq!(f() as u32, std::process::id());
            assert_eq!(lookup(libc, b"no_such_function_cdtrace"), None);
            // A data symbol is not a function, and the other way round.
            assert!(lookup_kind(libc, b"environ", STT_OBJECT).is_some());
            assert_eq!(lookup(libc, b"environ"), None);
            assert_eq!(program_symbol(b"getpid", core::ptr::null()), getpid);
        }
    }
}
