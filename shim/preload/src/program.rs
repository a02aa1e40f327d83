//! The program's own libc functions, found without linking libc.
//!
//! Each function is looked up once, in the main namespace's objects in load
//! order (this library left out): the definition the program's own calls
//! reach, in libc from glibc 2.34 on, in libdl or libpthread before. Only
//! the dynamic symbol tables of objects already mapped are read: no system
//! call, no loader call.

use cdtrace_abi::elf::{self, LinkMap};
use core::ffi::{c_char, c_int, c_void};
use core::sync::atomic::{AtomicUsize, Ordering};

extern "C" {
    /// Linker-defined: the ELF header of this image, mapped at its `l_addr`.
    static __ehdr_start: u8;
}

/// This library's own `struct link_map` (found by its load address), or null.
pub fn me() -> *const LinkMap {
    static ME: AtomicUsize = AtomicUsize::new(0);
    let m = ME.load(Ordering::Acquire);
    if m != 0 {
        return m as *const LinkMap;
    }
    // SAFETY: only the address of the linker symbol is taken; the main
    // namespace's list is read as `elf::main_namespace` allows.
    let found = unsafe {
        let base = core::ptr::addr_of!(__ehdr_start) as usize;
        elf::main_namespace().find(|&m| (*m).l_addr == base)
    };
    let found = found.map_or(0, |m| m as usize);
    ME.store(found, Ordering::Release);
    found as *const LinkMap
}

/// A function slot: 0 not looked up yet, 1 absent, else the address.
pub struct Func {
    name: &'static [u8],
    addr: AtomicUsize,
}

impl Func {
    pub const fn new(name: &'static [u8]) -> Func {
        Func {
            name,
            addr: AtomicUsize::new(0),
        }
    }

    /// The function's address, or None when the program has none.
    pub fn get(&self) -> Option<usize> {
        let mut a = self.addr.load(Ordering::Acquire);
        if a == 0 {
            // SAFETY: see the module docs.
            a = unsafe { elf::program_symbol(self.name, me()) };
            if a == 0 {
                a = 1;
            }
            self.addr.store(a, Ordering::Release);
        }
        (a > 1).then_some(a)
    }
}

pub static DLSYM: Func = Func::new(b"dlsym");
pub static DLVSYM: Func = Func::new(b"dlvsym");
pub static ERRNO_LOCATION: Func = Func::new(b"__errno_location");
pub static DL_FIND_OBJECT: Func = Func::new(b"_dl_find_object");
pub static DLADDR1: Func = Func::new(b"dladdr1");
pub static PTHREAD_KEY_CREATE: Func = Func::new(b"pthread_key_create");
pub static PTHREAD_GETSPECIFIC: Func = Func::new(b"pthread_getspecific");
pub static PTHREAD_SETSPECIFIC: Func = Func::new(b"pthread_setspecific");
/// What `pthread_atfork` (a static function of libc_nonshared.a) calls.
pub static REGISTER_ATFORK: Func = Func::new(b"__register_atfork");

/// `RTLD_NEXT` (`<dlfcn.h>`).
pub const RTLD_NEXT: *mut c_void = -1isize as *mut c_void;

/// `dlsym(handle, name)`, called from this library's code (so `RTLD_NEXT`
/// means "after this library"); null when there is no `dlsym`.
///
/// # Safety
/// `name` is NUL-terminated.
pub unsafe fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    match DLSYM.get() {
        Some(f) => {
            let f: unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void =
                core::mem::transmute(f);
            f(handle, name)
        }
        None => core::ptr::null_mut(),
    }
}

/// `dlvsym(handle, name, version)`; null when there is no `dlvsym`.
///
/// # Safety
/// `name` and `version` are NUL-terminated.
pub unsafe fn dlvsym(
    handle: *mut c_void,
    name: *const c_char,
    version: *const c_char,
) -> *mut c_void {
    match DLVSYM.get() {
        Some(f) => {
            let f: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char) -> *mut c_void =
                core::mem::transmute(f);
            f(handle, name, version)
        }
        None => core::ptr::null_mut(),
    }
}

/// The calling thread's `errno` in the program's libc, or null.
pub fn errno_location() -> *mut c_int {
    match ERRNO_LOCATION.get() {
        // SAFETY: libc's `int *__errno_location(void)`.
        Some(f) => unsafe {
            let f: unsafe extern "C" fn() -> *mut c_int = core::mem::transmute(f);
            f()
        },
        None => core::ptr::null_mut(),
    }
}

/// Runs `f` with the program's `errno` saved and restored.
pub fn keeping_errno<R>(f: impl FnOnce() -> R) -> R {
    let slot = errno_location();
    // SAFETY: the calling thread's errno slot, or null.
    let saved = (!slot.is_null()).then(|| unsafe { *slot });
    let r = f();
    if let Some(v) = saved {
        // SAFETY: as above.
        unsafe { *slot = v };
    }
    r
}
