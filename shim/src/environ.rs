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
//! when every start-up object is mapped (the start-up libraries'
//! constructors have run by then).
//!
//! Reading it takes no lock. Another thread may call `setenv` meanwhile:
//! glibc never frees or rewrites an environment string (setenv only swaps
//! pointers), and never frees the start-up array (it copies it the first
//! time it must grow it). But before 2.41 it frees every array it allocated
//! itself when it moves it again (`realloc`), and that memory may then hold
//! anything: the allocator's own pointers (a safe-linked free-list pointer
//! looks like a heap address with its low bits scrambled) or, once the
//! memory is reused or returned to the kernel, nothing mapped at all. So:
//! - while `environ` is still the start-up array, it is read directly, at no
//!   cost (the common case: a program that never added a variable), and so
//!   are the strings the kernel put on the stack with it. But `putenv` of a
//!   name the array holds rewrites that slot in place, with memory the
//!   program owns and may free (CPython before 3.9 freed the old value of
//!   each `os.environ` assignment): a string outside the start-up area is
//!   copied as below;
//! - once the program's libc has moved it, the array and the strings it
//!   points to are copied with `process_vm_readv(2)` on the shim's own
//!   process, which fails with `EFAULT` where a load would fault: a few
//!   system calls for each recorded event of such a process, never a crash
//!   (an entry that cannot be read makes the reading uncertain: nothing is
//!   recorded).
//!
//! Either way each pointer must lie between the executable's first page
//! and the top of user space, the array is read again when `environ` moved
//! meanwhile, and an absence is confirmed by a second look (a concurrent
//! `unsetenv` shifts entries down). glibc 2.41 made the race harmless by
//! never freeing the arrays; its own `getenv` takes the same risk before.

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

/// The start-up array, which glibc never frees (taken in [`init`]): read
/// directly while the program's `environ` still points at it.
static START_ARRAY: AtomicUsize = AtomicUsize::new(0);
/// Where the start-up array's strings lie (`[lo, hi)`, on the stack the
/// kernel built): only these are read in place.
static START_LO: AtomicUsize = AtomicUsize::new(0);
static START_HI: AtomicUsize = AtomicUsize::new(0);

/// Takes the start-up value. Call from `la_version`: the audit
/// namespace's libc still points at the start-up array, untouched by the
/// program (a forked child inherits the value with the memory).
pub fn init() {
    at_start();
    // The audit namespace's libc was given the start-up array, and the
    // program cannot move it: this is the array glibc never frees. (Not
    // the program's `environ` in `la_preinit`: the program's libraries'
    // constructors have run by then, and one that adds a variable has
    // already moved it to an array that can be freed.)
    extern "C" {
        static environ: *const *const core::ffi::c_char;
    }
    // SAFETY: reading the audit libc's own variable, set before la_version.
    let arr = unsafe { environ };
    // SAFETY: the start-up array and its strings, as the kernel built them:
    // no code of the program has run yet.
    let (lo, hi) = unsafe { start_area(arr.cast()) };
    START_LO.store(lo, Ordering::Relaxed);
    START_HI.store(hi, Ordering::Relaxed);
    START_ARRAY.store(arr as usize, Ordering::Relaxed);
}

/// The bytes the start-up strings of `arr` occupy on the stack, from the
/// lowest string's start to the highest string's NUL included (`(0, 0)` for
/// an empty or absent array). The kernel copies them there one after the
/// other, above the array itself. An entry below the array is not the
/// kernel's: ld.so replaces the `GLIBC_TUNABLES` slot with a copy of its
/// own before any audit module runs (glibc 2.26 to 2.38). It is left out,
/// or the area would stretch down to ld.so and take in every mapping
/// between.
///
/// # Safety
/// `arr` is null or a NULL-terminated array of NUL-terminated strings.
unsafe fn start_area(arr: *const *const u8) -> (usize, usize) {
    if arr.is_null() {
        return (0, 0);
    }
    let (mut lo, mut top) = (usize::MAX, 0usize);
    for i in 0..MAX_ENTRIES {
        // SAFETY: per the contract, up to the NULL entry.
        let p = unsafe { *arr.add(i) } as usize;
        if p == 0 {
            break;
        }
        if p > arr as usize {
            lo = lo.min(p);
            top = top.max(p);
        }
    }
    if top == 0 {
        return (0, 0);
    }
    // SAFETY: the highest string, NUL-terminated.
    let len = unsafe { core::ffi::CStr::from_ptr(top as *const core::ffi::c_char) }
        .to_bytes()
        .len();
    (lo, top + len + 1)
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
    let environ = unsafe { &*(var as *const AtomicPtr<*const u8>) };
    // SAFETY: loads of the program's `environ`.
    let now = unsafe { read(|| environ.load(Ordering::Acquire)) }?;
    (now.as_deref() != at_start()).then_some(now)
}

/// One consistent reading of the variable: the same array before and after
/// the scan, and an absence seen twice.
///
/// # Safety
/// `environ` loads the program's `environ` variable (a function, so that
/// the tests can play a program that moves it).
unsafe fn read(mut environ: impl FnMut() -> *mut *const u8) -> Option<Option<Vec<u8>>> {
    let low = LOW.load(Ordering::Relaxed);
    let mut absent_seen = false;
    // Chosen once per reading, when first needed.
    let copier = core::cell::OnceCell::new();
    for _ in 0..4 {
        let arr = environ();
        let found = if arr.is_null() {
            // clearenv(): no variables at all.
            Some(None)
        } else if arr as usize == START_ARRAY.load(Ordering::Relaxed) {
            let area = (
                START_LO.load(Ordering::Relaxed),
                START_HI.load(Ordering::Relaxed),
            );
            scan(&Direct::new(arr, area, &copier), low)
        } else {
            let c = copier.get_or_init(Copier::new).as_ref()?;
            scan(&Copied(arr, c), low)
        };
        if environ() != arr {
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

/// An environment array and the strings it points to, read one way or the
/// other (see the module's docs).
trait Memory {
    /// Entries `i..` of the array into `out`, stopping after a NULL; how
    /// many were read (at least one), None when they cannot be read.
    fn entries(&self, i: usize, out: &mut [usize]) -> Option<usize>;
    /// The first of `ptrs` whose string starts with `prefix`, if any (None:
    /// one cannot be read).
    fn first_match(&self, ptrs: &[usize], prefix: &[u8]) -> Option<Option<usize>>;
    /// The NUL-terminated string at `p`, at most `max` bytes of it.
    fn string(&self, p: usize, max: usize) -> Option<Vec<u8>>;
}

/// The start-up array: never freed, read in place, and so are the strings
/// in the start-up area. A string elsewhere was put there by `putenv` or
/// `setenv` and is copied (see the module's docs).
struct Direct<'c> {
    arr: *const *const u8,
    /// The start-up strings' bytes, `[lo, hi)`.
    area: (usize, usize),
    /// How to copy, chosen when the first string outside the area is met
    /// (None inside: no way), once per reading.
    copier: &'c core::cell::OnceCell<Option<Copier>>,
}

impl<'c> Direct<'c> {
    fn new(
        arr: *const *const u8,
        area: (usize, usize),
        copier: &'c core::cell::OnceCell<Option<Copier>>,
    ) -> Self {
        Direct { arr, area, copier }
    }

    fn in_area(&self, p: usize) -> bool {
        (self.area.0..self.area.1).contains(&p)
    }

    /// A reader for a string outside the area, or None when there is no
    /// safe way to copy (the reading is then uncertain).
    fn copier(&self) -> Option<Copied<'_>> {
        let c = self.copier.get_or_init(Copier::new).as_ref()?;
        Some(Copied(self.arr, c))
    }
}

impl Memory for Direct<'_> {
    fn entries(&self, i: usize, out: &mut [usize]) -> Option<usize> {
        for (k, slot) in out.iter_mut().enumerate() {
            // SAFETY: the start-up array is never freed, and this stops at
            // its NULL.
            *slot = unsafe { core::ptr::read_volatile(self.arr.add(i + k)) } as usize;
            if *slot == 0 {
                return Some(k + 1);
            }
        }
        Some(out.len())
    }

    fn first_match(&self, ptrs: &[usize], prefix: &[u8]) -> Option<Option<usize>> {
        // SAFETY: a start-up string, on the stack for the life of the
        // process; read byte by byte, never past its NUL (the area ends
        // with one).
        let starts = |p: usize| {
            prefix
                .iter()
                .enumerate()
                .all(|(i, &c)| unsafe { core::ptr::read_volatile((p as *const u8).add(i)) == c })
        };
        for (k, &p) in ptrs.iter().enumerate() {
            let hit = if self.in_area(p) {
                starts(p)
            } else {
                self.copier()?.first_match(&[p], prefix)?.is_some()
            };
            if hit {
                return Some(Some(k));
            }
        }
        Some(None)
    }

    fn string(&self, p: usize, max: usize) -> Option<Vec<u8>> {
        if !self.in_area(p) {
            return self.copier()?.string(p, max);
        }
        let p = p as *const u8;
        // SAFETY: as above.
        let len = (0..max)
            .find(|&j| unsafe { core::ptr::read_volatile(p.add(j)) } == 0)
            .unwrap_or(max);
        // SAFETY: `len` bytes of that string.
        Some(unsafe { core::slice::from_raw_parts(p, len) }.to_vec())
    }
}

/// An array the program's libc allocated, which it may free at any moment:
/// every byte copied (see [`Copier`]), a page at most per range, in batches
/// (about three system calls for an environment of 64 entries).
struct Copied<'c>(*const *const u8, &'c Copier);

/// Bytes to a page's end from `a` (4 KiB pages: a smaller range than the
/// real page, never a larger one).
fn to_page_end(a: usize) -> usize {
    4096 - (a & 4095)
}

impl Memory for Copied<'_> {
    fn entries(&self, i: usize, out: &mut [usize]) -> Option<usize> {
        let at = self.0 as usize + i * 8;
        let n = out.len().min(to_page_end(at) / 8).max(1);
        let mut bytes = [0u8; 8 * BATCH];
        if !self.1.copy(&[(at, 8 * n)], &mut bytes[..8 * n]) {
            return None;
        }
        for (k, slot) in out[..n].iter_mut().enumerate() {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[8 * k..8 * k + 8]);
            *slot = usize::from_ne_bytes(w);
            if *slot == 0 {
                return Some(k + 1);
            }
        }
        Some(n)
    }

    fn first_match(&self, ptrs: &[usize], prefix: &[u8]) -> Option<Option<usize>> {
        // Each string's first bytes, up to the prefix's length or its
        // page's end (a short string may end right before an unmapped
        // page), all in one call.
        let mut ranges = [(0usize, 0usize); BATCH];
        let mut total = 0;
        for (r, &p) in ranges.iter_mut().zip(ptrs) {
            *r = (p, prefix.len().min(to_page_end(p)));
            total += r.1;
        }
        let mut buf = [0u8; BATCH * 16];
        if !self.1.copy(&ranges[..ptrs.len()], &mut buf[..total]) {
            return None;
        }
        let mut off = 0;
        for (k, &(p, len)) in ranges[..ptrs.len()].iter().enumerate() {
            let got = &buf[off..off + len];
            off += len;
            if got.iter().zip(prefix).any(|(a, b)| a != b) {
                continue;
            }
            // The prefix so far; the rest is on the next page.
            let mut rest = [0u8; 16];
            let rest = &mut rest[..prefix.len() - len];
            if !rest.is_empty() && !self.1.copy(&[(p + len, rest.len())], rest) {
                return None;
            }
            if rest == &prefix[len..] {
                return Some(Some(k));
            }
        }
        Some(None)
    }

    fn string(&self, p: usize, max: usize) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let mut at = p;
        let mut page = [0u8; 4096];
        while out.len() < max {
            let n = to_page_end(at).min(max - out.len());
            if !self.1.copy(&[(at, n)], &mut page[..n]) {
                return None;
            }
            if let Some(end) = page[..n].iter().position(|&c| c == 0) {
                out.extend_from_slice(&page[..end]);
                return Some(out);
            }
            out.extend_from_slice(&page[..n]);
            at += n;
        }
        Some(out)
    }
}

/// Entries read at a time.
const BATCH: usize = 64;

/// How bytes of this process that may be unmapped are copied without a
/// fault: the kernel reads them and reports an unmapped address as an
/// error. One way per reading.
enum Copier {
    /// `process_vm_readv(2)` on the shim's own process: many ranges in one
    /// call.
    Vm,
    /// `pread(2)` of `/proc/self/mem` (this open descriptor), one range per
    /// call: under a seccomp filter, which may kill the process for a
    /// `process_vm_readv` it does not list (systemd's `@system-service`
    /// leaves out `@debug`) but lets it open and read a file, as the shim
    /// does anyway.
    Mem(libc::c_int),
}

impl Copier {
    /// The way for this process now, or None when there is none (filtered,
    /// and `/proc` not mounted or `/proc/self/mem` refused).
    fn new() -> Option<Copier> {
        if !seccomp_filtered() {
            return Some(Copier::Vm);
        }
        // SAFETY: a path literal; the descriptor is closed on drop.
        let fd =
            unsafe { libc::open(c"/proc/self/mem".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        (fd >= 0).then_some(Copier::Mem(fd))
    }

    /// Copies the `ranges` (address, length) of this process, one after the
    /// other, into `buf`. False unless every byte was copied (an unmapped
    /// address, or a call refused).
    fn copy(&self, ranges: &[(usize, usize)], buf: &mut [u8]) -> bool {
        match *self {
            Copier::Vm => vm_copy(ranges, buf),
            Copier::Mem(fd) => mem_copy(fd, ranges, buf),
        }
    }
}

impl Drop for Copier {
    fn drop(&mut self) {
        if let Copier::Mem(fd) = *self {
            // SAFETY: our own descriptor, closed once.
            unsafe { libc::close(fd) };
        }
    }
}

/// [`Copier::Mem`]: a `pread` per range, at the range's address as offset
/// (EIO, or a short count, where the address is not mapped).
fn mem_copy(fd: libc::c_int, ranges: &[(usize, usize)], buf: &mut [u8]) -> bool {
    let mut off = 0;
    for &(a, n) in ranges {
        let Some(dst) = buf.get_mut(off..off + n) else {
            return false;
        };
        let Ok(at) = libc::off_t::try_from(a) else {
            return false;
        };
        // SAFETY: reading into a buffer we own.
        let got = unsafe { libc::pread(fd, dst.as_mut_ptr().cast(), n, at) };
        if got != n as isize {
            return false;
        }
        off += n;
    }
    off == buf.len()
}

/// [`Copier::Vm`]: the ranges with one `process_vm_readv(2)`, which fails
/// (EFAULT) where a load would fault.
fn vm_copy(ranges: &[(usize, usize)], buf: &mut [u8]) -> bool {
    if buf.is_empty() {
        return true;
    }
    let mut remote = [libc::iovec {
        iov_base: core::ptr::null_mut(),
        iov_len: 0,
    }; BATCH];
    for (r, &(a, n)) in remote.iter_mut().zip(ranges) {
        *r = libc::iovec {
            iov_base: a as *mut libc::c_void,
            iov_len: n,
        };
    }
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let count = ranges.len().min(BATCH);
    // SAFETY: one local buffer we own; the remote ranges are only read, by
    // the kernel, which reports a fault instead of raising it.
    let n = unsafe {
        libc::process_vm_readv(
            crate::trace::pid() as libc::pid_t,
            &local,
            1,
            remote.as_ptr(),
            count as libc::c_ulong,
            0,
        )
    };
    n == buf.len() as isize
}

/// Whether a seccomp filter may watch this process's system calls
/// (`Seccomp:` in `/proc/self/status` is not 0, or cannot be read). A filter
/// may kill the process on a call it does not list (systemd's
/// `SystemCallFilter=`, sandboxes), and `process_vm_readv` is one that
/// filters leave out: under one the shim does not make it (see
/// [`Copier::Mem`]). Filters are only ever added, so a process seen filtered
/// stays so; one seen unfiltered is looked at again each time (three calls
/// the shim already makes: open, read, close).
fn seccomp_filtered() -> bool {
    static FILTERED: AtomicUsize = AtomicUsize::new(0);
    if FILTERED.load(Ordering::Relaxed) != 0 {
        return true;
    }
    let mut buf = [0u8; 4096];
    // SAFETY: a path literal and a buffer we own.
    let n = unsafe {
        let fd = libc::open(
            c"/proc/self/status".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            -1
        } else {
            let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
            libc::close(fd);
            n
        }
    };
    let text = &buf[..usize::try_from(n).unwrap_or(0)];
    const KEY: &[u8] = b"\nSeccomp:\t";
    let mode = text
        .windows(KEY.len())
        .position(|w| w == KEY)
        .and_then(|at| text.get(at + KEY.len()).copied());
    let filtered = mode != Some(b'0');
    if filtered {
        FILTERED.store(1, Ordering::Relaxed);
    }
    filtered
}

/// The value of the first `LD_LIBRARY_PATH=` entry of the array in `mem`:
/// `Some(None)` when there is none, None when an entry is not a pointer a
/// string can be at, or cannot be read (the array was being freed).
fn scan(mem: &impl Memory, low: usize) -> Option<Option<Vec<u8>>> {
    let mut ptrs = [0usize; BATCH];
    let mut i = 0;
    while i < MAX_ENTRIES {
        let n = mem.entries(i, &mut ptrs)?;
        let batch = &ptrs[..n];
        let end = batch.iter().position(|&p| p == 0);
        let live = &batch[..end.unwrap_or(n)];
        if live.iter().any(|&p| p < low || p >= USER_TOP) {
            return None;
        }
        if let Some(k) = mem.first_match(live, NAME)? {
            return mem.string(live[k] + NAME.len(), MAX_VALUE).map(Some);
        }
        if end.is_some() {
            return Some(None);
        }
        i += n;
    }
    None
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

    /// The way a filtered process copies.
    fn mem_copier() -> Copier {
        // SAFETY: a path literal.
        let fd =
            unsafe { libc::open(c"/proc/self/mem".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        assert!(
            fd >= 0,
            "/proc/self/mem: {}",
            std::io::Error::last_os_error()
        );
        Copier::Mem(fd)
    }

    /// `scan` of an array copied both ways, which must agree.
    fn scan_copied(arr: *const *const u8, low: usize) -> Option<Option<Vec<u8>>> {
        let vm = scan(&Copied(arr, &Copier::Vm), low);
        assert_eq!(
            scan(&Copied(arr, &mem_copier()), low),
            vm,
            "copied by pread"
        );
        vm
    }

    /// `scan` of the start-up array, strings outside `area` copied both
    /// ways, which must agree.
    fn scan_direct(arr: *const *const u8, area: (usize, usize)) -> Option<Option<Vec<u8>>> {
        let vm = scan(&Direct::new(arr, area, &core::cell::OnceCell::new()), 0);
        let mem = core::cell::OnceCell::from(Some(mem_copier()));
        assert_eq!(
            scan(&Direct::new(arr, area, &mem), 0),
            vm,
            "copied by pread"
        );
        vm
    }

    /// `scan` both ways, which must agree.
    fn both(env: &[*const u8], low: usize) -> Option<Option<Vec<u8>>> {
        let arr = env.as_ptr().cast::<*const u8>();
        // Its strings are the start-up area (none for a bogus pointer,
        // which `scan` refuses before reading any string).
        let genuine = env.iter().all(|&p| (p as usize) < USER_TOP);
        // SAFETY: the test's own array of strings.
        let area = if genuine {
            unsafe { start_area(arr) }
        } else {
            (0, 0)
        };
        let direct = scan(&Direct::new(arr, area, &core::cell::OnceCell::new()), low);
        assert_eq!(scan_copied(arr, low), direct);
        direct
    }

    #[test]
    fn finds_the_first_entry_and_tells_absence_from_doubt() {
        let a = CString::new("HOME=/root").unwrap();
        let b = CString::new("LD_LIBRARY_PATH=/x:/y").unwrap();
        let c = CString::new("LD_LIBRARY_PATH=/z").unwrap();
        let short = CString::new("LD_LIB").unwrap();
        let env = array(&[&a, &short, &b, &c]);
        assert_eq!(both(&env, 0), Some(Some(b"/x:/y".to_vec())));
        let env = array(&[&a, &short]);
        assert_eq!(both(&env, 0), Some(None));
        // A pointer below the executable, or above user space: the array
        // was being freed, so nothing is said.
        let low = a.as_ptr() as usize + 1;
        let env = array(&[&a, &b]);
        assert_eq!(both(&env, low), None);
        let bogus = [USER_TOP as *const u8, core::ptr::null()];
        assert_eq!(both(&bogus, 0), None);
    }

    #[test]
    fn an_empty_value_is_a_value() {
        let e = CString::new("LD_LIBRARY_PATH=").unwrap();
        let env = array(&[&e]);
        assert_eq!(both(&env, 0), Some(Some(Vec::new())));
    }

    #[test]
    fn many_entries_are_read_in_batches() {
        let names: Vec<CString> = (0..300)
            .map(|i| CString::new(format!("V{i}=x")).unwrap())
            .collect();
        let want = CString::new("LD_LIBRARY_PATH=/late").unwrap();
        let mut refs: Vec<&CString> = names.iter().collect();
        refs.insert(200, &want);
        assert_eq!(both(&array(&refs), 0), Some(Some(b"/late".to_vec())));
        refs.remove(200);
        assert_eq!(both(&array(&refs), 0), Some(None));
    }

    /// Two pages, the second unmapped: what an array freed and returned to
    /// the kernel, or a string at the end of a mapping, looks like.
    fn page_before_a_hole() -> *mut u8 {
        pages_before_a_hole(1)
    }

    /// `n` pages, then one unmapped. Placed far from where the kernel
    /// puts mappings of its own choosing, so that no other test thread's
    /// mapping fills the hole meanwhile.
    fn pages_before_a_hole(n: usize) -> *mut u8 {
        static NEXT: AtomicUsize = AtomicUsize::new(0x2000_0000_0000);
        let at = NEXT.fetch_add(1 << 24, Ordering::Relaxed);
        // SAFETY: a private anonymous mapping of our own, where nothing is
        // mapped (MAP_FIXED_NOREPLACE fails otherwise).
        unsafe {
            let p = libc::mmap(
                at as *mut libc::c_void,
                4096 * (n + 1),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED, "{}", std::io::Error::last_os_error());
            libc::munmap(p.cast::<u8>().add(4096 * n).cast(), 4096);
            p.cast()
        }
    }

    /// An array whose NULL is the last word before a hole is read whole:
    /// a batch is cut at the page's end.
    #[test]
    fn an_array_ending_right_before_a_hole_is_read() {
        let page = page_before_a_hole();
        let a = CString::new("HOME=/root").unwrap();
        let b = CString::new("LD_LIBRARY_PATH=/end").unwrap();
        // SAFETY: writes inside our page.
        unsafe {
            let arr = page.add(4096 - 24).cast::<*const u8>();
            *arr = a.as_ptr().cast();
            *arr.add(1) = core::ptr::null();
            assert_eq!(scan_copied(arr, 0), Some(None));
            *arr.add(1) = b.as_ptr().cast();
            *arr.add(2) = core::ptr::null();
            assert_eq!(scan_copied(arr, 0), Some(Some(b"/end".to_vec())));
        }
    }

    /// A string whose first bytes are on one page and the rest on the next:
    /// both parts are compared.
    #[test]
    fn a_prefix_across_two_pages_is_compared_whole() {
        let page = pages_before_a_hole(2);
        // SAFETY: writes inside our two pages.
        unsafe {
            let at = page.add(4096 - 5);
            let put = |s: &[u8]| core::ptr::copy_nonoverlapping(s.as_ptr(), at, s.len());
            let env = [at.cast_const(), core::ptr::null()];
            put(b"LD_LIBRARY_PATH=/v\0");
            assert_eq!(scan_copied(env.as_ptr(), 0), Some(Some(b"/v".to_vec())));
            put(b"LD_LIBXXXXXXXXXX=/v\0");
            assert_eq!(scan_copied(env.as_ptr(), 0), Some(None));
            put(b"LD_LIBRARY_PATHX/v\0");
            assert_eq!(scan_copied(env.as_ptr(), 0), Some(None));
        }
    }

    #[test]
    fn an_unmapped_entry_makes_the_reading_uncertain_not_a_crash() {
        let page = page_before_a_hole();
        // SAFETY: addresses in and past our page; only Copied reads them.
        unsafe {
            let hole = page.add(4096);
            let a = CString::new("HOME=/root").unwrap();
            let env = [
                a.as_ptr().cast::<u8>(),
                hole.cast_const(),
                core::ptr::null(),
            ];
            assert_eq!(scan_copied(env.as_ptr(), 0), None);
            // An array whose end lies in the hole.
            let arr = hole.sub(8).cast::<*const u8>();
            *arr.cast_mut() = a.as_ptr().cast();
            assert_eq!(scan_copied(arr, 0), None);
        }
    }

    #[test]
    fn strings_at_the_end_of_a_mapping_are_read() {
        let page = page_before_a_hole();
        // SAFETY: writes inside our page; only Copied reads near the hole.
        unsafe {
            let put = |at: usize, s: &[u8]| {
                core::ptr::copy_nonoverlapping(s.as_ptr(), page.add(at), s.len());
            };
            // A short string right before the hole: not a match, no doubt.
            put(4096 - 4, b"A=b\0");
            let other = page.add(4096 - 4).cast_const();
            // The variable itself right before the hole.
            put(4096 - 20, b"LD_LIBRARY_PATH=/q\0");
            let var = page.add(4096 - 20).cast_const();
            let env = [other, core::ptr::null()];
            assert_eq!(scan_copied(env.as_ptr(), 0), Some(None));
            let env = [other, var, core::ptr::null()];
            assert_eq!(scan_copied(env.as_ptr(), 0), Some(Some(b"/q".to_vec())));
            // Its prefix cut by the hole: uncertain.
            put(4096 - 6, b"LD_LIB");
            let cut = [page.add(4096 - 6).cast_const(), core::ptr::null()];
            assert_eq!(scan_copied(cut.as_ptr(), 0), None);
        }
    }

    /// The start-up array with one slot replaced in place (`putenv` of a
    /// name it holds) by memory the program owns and later unmaps: the
    /// array is never freed, but that string is not the loader's.
    #[test]
    fn a_replaced_start_up_entry_is_copied_not_read_in_place() {
        let page = page_before_a_hole();
        let a = CString::new("HOME=/root").unwrap();
        let b = CString::new("LD_LIBRARY_PATH=/start").unwrap();
        let env = array(&[&a, &b]);
        // SAFETY: the test's own array.
        let area = unsafe { start_area(env.as_ptr()) };
        // SAFETY: writes inside our page; the hole is only ever copied.
        unsafe {
            let put = |at: usize, s: &[u8]| {
                core::ptr::copy_nonoverlapping(s.as_ptr(), page.add(at), s.len());
            };
            put(0, b"LD_LIBRARY_PATH=/put\0");
            let mut env = env.clone();
            // Still readable: the program's value, copied.
            env[0] = page.cast_const();
            assert_eq!(
                scan_direct(env.as_ptr(), area),
                Some(Some(b"/put".to_vec()))
            );
            // Unmapped since (the program freed it): uncertain, no crash.
            env[0] = page.add(4096).cast_const();
            assert_eq!(scan_direct(env.as_ptr(), area), None);
            // The value itself in unmapped memory.
            env[0] = a.as_ptr().cast();
            env[1] = page.add(4096).cast_const();
            assert_eq!(scan_direct(env.as_ptr(), area), None);
        }
        // The start-up strings themselves are read in place: a scan of the
        // array as it was gives the start-up value.
        assert_eq!(
            scan_direct(env.as_ptr(), area),
            Some(Some(b"/start".to_vec()))
        );
    }

    /// The kernel's layout of the start-up environment: the array, then
    /// (above it, after the auxiliary vector) the strings, one after the
    /// other. `moved` names an entry that points instead at that string
    /// put below the array, as ld.so does with `GLIBC_TUNABLES` before
    /// any audit module runs (glibc 2.26 to 2.38). Returns the memory and
    /// the array.
    fn kernel_layout(strings: &[&str], moved: Option<usize>) -> (Vec<u64>, usize) {
        let n = strings.len();
        let bytes: usize = strings.iter().map(|s| s.len() + 1).sum();
        // Room below the array for the moved string, then the array, the
        // auxiliary vector and the strings.
        let below = bytes.div_ceil(8);
        let mut mem = vec![0u64; below + n + 1 + 8 + bytes.div_ceil(8)];
        let base = mem.as_mut_ptr() as usize;
        let arr = base + 8 * below;
        // SAFETY: every write lies inside `mem`.
        unsafe {
            let mut at = arr + 8 * (n + 1 + 8);
            for (i, s) in strings.iter().enumerate() {
                core::ptr::copy_nonoverlapping(s.as_ptr(), at as *mut u8, s.len());
                *(arr as *mut usize).add(i) = at;
                at += s.len() + 1;
            }
            if let Some(i) = moved {
                let s = strings[i];
                core::ptr::copy_nonoverlapping(s.as_ptr(), base as *mut u8, s.len());
                *(arr as *mut usize).add(i) = base;
            }
        }
        (mem, arr)
    }

    #[test]
    fn the_start_up_area_spans_the_strings_above_the_array_only() {
        let (_mem, arr) = kernel_layout(&["HOME=/root", "LD_LIBRARY_PATH=/start", "A=b"], None);
        // SAFETY: the array built above.
        let (lo, hi) = unsafe { start_area(arr as *const *const u8) };
        assert_eq!(lo, arr + 8 * 12);
        assert_eq!(hi, lo + 11 + 23 + 4);
        // An entry ld.so rewrote, below the array: outside the area, which
        // must not stretch down to it (everything mapped between would
        // then be read in place).
        let strings = ["HOME=/root", "GLIBC_TUNABLES=glibc.malloc.check=0", "A=b"];
        let (_mem, arr2) = kernel_layout(&strings, Some(1));
        // SAFETY: as above.
        let (lo2, hi2) = unsafe { start_area(arr2 as *const *const u8) };
        assert_eq!(lo2, arr2 + 8 * 12);
        assert_eq!(hi2, lo2 + 11 + 36 + 4);
        assert_eq!(unsafe { start_area(array(&[]).as_ptr()) }, (0, 0));
    }

    /// A program that moves `environ` between the reads of [`read`]: each
    /// call of the returned function gives the next array of `seq` (the
    /// last one again once `seq` is used up).
    fn moving<'a>(seq: &'a [&'a Vec<*const u8>]) -> impl FnMut() -> *mut *const u8 + 'a {
        let mut i = 0;
        move || {
            let arr = seq[i.min(seq.len() - 1)].as_ptr().cast_mut();
            i += 1;
            arr
        }
    }

    #[test]
    fn a_reading_during_which_environ_moved_is_done_again() {
        let old = CString::new("LD_LIBRARY_PATH=/old").unwrap();
        let new = CString::new("LD_LIBRARY_PATH=/new").unwrap();
        LOW.store(0, Ordering::Relaxed);
        // Read from the old array, then found moved: read the new one.
        let (old, new) = (array(&[&old]), array(&[&new]));
        let got = unsafe { read(moving(&[&old, &new])) };
        assert_eq!(got, Some(Some(b"/new".to_vec())));
    }

    #[test]
    fn an_absence_is_said_only_when_seen_twice() {
        let home = CString::new("HOME=/root").unwrap();
        let var = CString::new("LD_LIBRARY_PATH=/v").unwrap();
        LOW.store(0, Ordering::Relaxed);
        // A concurrent unsetenv shifted the entry past the scan once (the
        // same array before and after that scan).
        let (without, with) = (array(&[&home]), array(&[&home, &var]));
        let got = unsafe { read(moving(&[&without, &without, &with])) };
        assert_eq!(got, Some(Some(b"/v".to_vec())));
        let got = unsafe { read(moving(&[&without])) };
        assert_eq!(got, Some(None));
    }

    #[test]
    fn a_consistent_reading_of_a_variable() {
        let a = CString::new("LD_LIBRARY_PATH=/a").unwrap();
        let env = array(&[&a]);
        let var = || env.as_ptr().cast_mut();
        LOW.store(0, Ordering::Relaxed);
        // Not the start-up array: copied.
        assert_eq!(unsafe { read(var) }, Some(Some(b"/a".to_vec())));
        // The start-up array: read in place.
        START_ARRAY.store(env.as_ptr() as usize, Ordering::Relaxed);
        // SAFETY: the test's own array.
        let (lo, hi) = unsafe { start_area(env.as_ptr()) };
        START_LO.store(lo, Ordering::Relaxed);
        START_HI.store(hi, Ordering::Relaxed);
        assert_eq!(unsafe { read(var) }, Some(Some(b"/a".to_vec())));
        START_ARRAY.store(0, Ordering::Relaxed);
        assert_eq!(unsafe { read(core::ptr::null_mut) }, Some(None));
    }
}
