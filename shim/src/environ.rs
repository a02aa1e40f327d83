//! The program's `LD_LIBRARY_PATH` at a request, when the program changed
//! it after start-up (issue 9, class 5).
//!
//! ld.so reads `LD_LIBRARY_PATH` once, while the process starts
//! (glibc `elf/rtld.c` `process_envvars`, then `_dl_init_paths`), and
//! searches those directories for the life of the process image. A program
//! that sets it later (`os.environ["LD_LIBRARY_PATH"] = …` in Python,
//! `setenv` in C) changes nothing for its own `dlopen` calls, which is
//! what users rarely expect. The shim records the value the program holds
//! at a recorded request when it differs from the start-up one, so that the
//! report can name the directory the program added and glibc never searched.
//!
//! Whose environment: not the audit namespace's. That libc has its own
//! `environ`, which points at the start-up array; the program's libc moves
//! its `environ` to a new array when a variable is added. The program's
//! variable is the first definition of `__environ` in the main namespace,
//! in the order of its objects: the executable's own copy when it reads
//! `environ` itself (a copy relocation: libc's code then uses the
//! executable's copy too), else libc's. It is found once, in `la_preinit`,
//! when every start-up object is mapped and no program code has run.
//!
//! Reading it costs no system call and takes no lock. Another thread may
//! call `setenv` meanwhile: glibc never frees or rewrites an environment
//! string (setenv only swaps pointers), but before 2.41 it frees the old
//! array when it moves it (`realloc`), and the allocator then writes its own
//! pointers over the first two entries. So each pointer is checked before
//! it is followed (it must lie between the executable's first page and the
//! top of user space, which rejects what glibc 2.32+'s safe-linking makes
//! of a free-list pointer, and every random `tcache` key), the array is read
//! again when `environ` moved meanwhile, and an absence is confirmed by a
//! second look (a concurrent `unsetenv` shifts entries down). What can
//! still go wrong is what glibc's own `getenv` risks in the same race (the
//! libraries being loaded call it in their constructors); glibc 2.41 made
//! both safe by never freeing the arrays.

use cudnn_trace_format::json::Line;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::OnceLock;

const NAME: &[u8] = b"LD_LIBRARY_PATH=";
/// Entries read at most: an environment is tens to a few hundred entries.
const MAX_ENTRIES: usize = 1 << 14;
/// Bytes of a value read at most (Linux's limit for one string is 128 KiB).
const MAX_VALUE: usize = 1 << 17;
/// Above every user-space address on 64-bit Linux (48-bit, or 52 on
/// aarch64 with large VAs: both below this).
const USER_TOP: usize = 1 << 56;

/// The value at start-up, the one ld.so searches (None: unset).
static START: OnceLock<Option<Vec<u8>>> = OnceLock::new();
/// Address of the program's `environ` variable (a `char **`); 0 until
/// found or when not found.
static ENVIRON: AtomicUsize = AtomicUsize::new(0);
/// Lowest address a genuine environment string may have: the executable's
/// first page (its strings, the heap and the stack all lie above).
static LOW: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Takes the start-up value. Call from `la_version`: the audit
/// namespace's libc still points at the start-up array, untouched by the
/// program (a forked child inherits the value with the memory).
pub fn init() {
    at_start();
}

/// The value ld.so searches, as the process started (None: unset).
pub fn at_start() -> Option<&'static [u8]> {
    START
        .get_or_init(|| std::env::var_os("LD_LIBRARY_PATH").map(|v| v.into_encoded_bytes()))
        .as_deref()
}

/// Finds the program's `environ`. Call from `la_preinit`.
///
/// # Safety
/// Reads the main namespace's link map: every start-up object is mapped
/// and relocated, and only this thread runs.
pub unsafe fn locate() {
    use cdtrace_abi::elf::{lookup_kind, main_namespace, STT_OBJECT};
    let find = |name: &[u8]| main_namespace().find_map(|m| lookup_kind(m, name, STT_OBJECT));
    let Some(addr) = find(b"__environ").or_else(|| find(b"environ")) else {
        return;
    };
    // SAFETY: getauxval has no preconditions.
    let phdr = unsafe { libc::getauxval(libc::AT_PHDR) } as usize;
    if phdr == 0 {
        return;
    }
    LOW.store(phdr & !0xfff, Ordering::Relaxed);
    ENVIRON.store(addr, Ordering::Release);
}

/// What the program's environment holds for `LD_LIBRARY_PATH` now, when
/// that differs from the start-up value: `Some(None)` when the program
/// removed it. None when it is the same, or cannot be read reliably.
pub fn changed() -> Option<Option<Vec<u8>>> {
    let var = ENVIRON.load(Ordering::Acquire);
    if var == 0 {
        return None;
    }
    // SAFETY: `var` is the address of the program's `environ`, a pointer
    // variable of the main namespace's start-up objects, which are never
    // unloaded.
    let now = unsafe { read(&*(var as *const AtomicPtr<*const u8>)) }?;
    (now.as_deref() != at_start()).then_some(now)
}

/// One consistent reading of the variable: the same array before and after
/// the scan, and an absence seen twice.
///
/// # Safety
/// `environ` is the program's `environ` variable.
unsafe fn read(environ: &AtomicPtr<*const u8>) -> Option<Option<Vec<u8>>> {
    let low = LOW.load(Ordering::Relaxed);
    let mut absent_seen = false;
    for _ in 0..4 {
        let arr = environ.load(Ordering::Acquire);
        let found = if arr.is_null() {
            // clearenv(): no variables at all.
            Some(None)
        } else {
            scan(arr, low)
        };
        if environ.load(Ordering::Acquire) != arr {
            continue;
        }
        match found {
            Some(None) if !absent_seen => absent_seen = true,
            Some(v) => return Some(v),
            None => return None,
        }
    }
    None
}

/// The value of the first `LD_LIBRARY_PATH=` entry of the array `arr`:
/// `Some(None)` when there is none, None when an entry is not a pointer a
/// string can be at (the array was being freed).
///
/// # Safety
/// `arr` is an environment array the program's libc published.
unsafe fn scan(arr: *const *const u8, low: usize) -> Option<Option<Vec<u8>>> {
    for i in 0..MAX_ENTRIES {
        let p = core::ptr::read_volatile(arr.add(i));
        if p.is_null() {
            return Some(None);
        }
        if (p as usize) < low || (p as usize) >= USER_TOP {
            return None;
        }
        if !starts_with(p, NAME) {
            continue;
        }
        let v = p.add(NAME.len());
        let len = (0..MAX_VALUE)
            .find(|&j| core::ptr::read_volatile(v.add(j)) == 0)
            .unwrap_or(MAX_VALUE);
        return Some(Some(core::slice::from_raw_parts(v, len).to_vec()));
    }
    None
}

/// Whether the NUL-terminated string at `p` starts with `prefix` (read
/// byte by byte: never past its end).
unsafe fn starts_with(p: *const u8, prefix: &[u8]) -> bool {
    prefix
        .iter()
        .enumerate()
        .all(|(i, &c)| core::ptr::read_volatile(p.add(i)) == c)
}

/// Writes `ld_library_path_now` on a request's event when the program's
/// value differs from the start-up one (nothing otherwise). Only after
/// start-up: before `la_preinit` no code of the program has run.
pub fn write_now(l: &mut Line<'_>) {
    if let Some(now) = changed() {
        l.opt_bytes("ld_library_path_now", now.as_deref());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    fn array(entries: &[&CString]) -> Vec<*const u8> {
        let mut v: Vec<*const u8> = entries.iter().map(|c| c.as_ptr().cast()).collect();
        v.push(core::ptr::null());
        v
    }

    #[test]
    fn finds_the_first_entry_and_tells_absence_from_doubt() {
        let a = CString::new("HOME=/root").unwrap();
        let b = CString::new("LD_LIBRARY_PATH=/x:/y").unwrap();
        let c = CString::new("LD_LIBRARY_PATH=/z").unwrap();
        let short = CString::new("LD_LIB").unwrap();
        let env = array(&[&a, &short, &b, &c]);
        // SAFETY: a valid, NULL-terminated array of strings.
        let got = unsafe { scan(env.as_ptr(), 0) };
        assert_eq!(got, Some(Some(b"/x:/y".to_vec())));
        let env = array(&[&a, &short]);
        assert_eq!(unsafe { scan(env.as_ptr(), 0) }, Some(None));
        // A pointer below the executable, or above user space: the array
        // was being freed, so nothing is said.
        let low = a.as_ptr() as usize + 1;
        let env = array(&[&a, &b]);
        assert_eq!(unsafe { scan(env.as_ptr(), low) }, None);
        let bogus = [USER_TOP as *const u8, core::ptr::null()];
        assert_eq!(unsafe { scan(bogus.as_ptr(), 0) }, None);
    }

    #[test]
    fn an_empty_value_is_a_value() {
        let e = CString::new("LD_LIBRARY_PATH=").unwrap();
        let env = array(&[&e]);
        assert_eq!(unsafe { scan(env.as_ptr(), 0) }, Some(Some(Vec::new())));
    }

    #[test]
    fn a_consistent_reading_of_a_variable() {
        let a = CString::new("LD_LIBRARY_PATH=/a").unwrap();
        let env = array(&[&a]);
        let var = AtomicPtr::new(env.as_ptr().cast_mut());
        LOW.store(0, Ordering::Relaxed);
        assert_eq!(unsafe { read(&var) }, Some(Some(b"/a".to_vec())));
        let none = AtomicPtr::new(core::ptr::null_mut());
        assert_eq!(unsafe { read(&none) }, Some(None));
    }
}
