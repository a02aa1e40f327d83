//! How the two copies of the shim in one process find each other.
//!
//! The launcher loads `libcdtrace.so` twice: as an rtld-audit module (its
//! own namespace, its own libc) and as an LD_PRELOAD library (the program's
//! namespace, where it can hook `dlopen`). Statics are not shared, so the
//! audit copy hands the preload copy a table of functions to call.
//!
//! Both copies are the same file, so a static sits at the same offset from
//! the start of each copy's image. When the audit copy sees its twin mapped
//! (`la_objopen`, before the twin runs any code), it writes the table's
//! address into the twin's [`BRIDGE`] at `twin.l_addr + offset`. A magic
//! string at a known offset confirms the twin really is this build.

use crate::sys::LinkMap;
use core::ffi::{c_char, c_int, c_long, c_void};
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Calls from the preload copy into the audit copy.
#[repr(C)]
pub struct Bridge {
    /// A `dlopen` (kind 0) or `dlmopen` (kind 1) is starting; returns a token (0: not traced).
    pub begin: unsafe extern "C" fn(
        kind: u32,
        name: *const c_char,
        mode: c_int,
        lmid: c_long,
        caller: *const LinkMap,
    ) -> u64,
    /// It returned `result` with `errno`.
    pub end: unsafe extern "C" fn(token: u64, result: *mut c_void, errno: c_int),
    /// The program read this text from `dlerror()`.
    pub error_text: unsafe extern "C" fn(text: *const c_char),
    /// The calling thread is exiting (from a pthread key destructor, which
    /// the program's libc runs; the audit namespace's libc never sees it).
    pub thread_exit: unsafe extern "C" fn(),
    /// In a child just forked (from the program's libc's `pthread_atfork`
    /// child handler): call counts start again from zero.
    pub forked: unsafe extern "C" fn(),
}

/// In the preload copy: the audit copy's table, or null (audit role absent).
pub static BRIDGE: AtomicPtr<Bridge> = AtomicPtr::new(core::ptr::null_mut());

/// Same bytes in both copies; checked before writing into the twin.
#[used]
static MAGIC: [u8; 16] = *b"cdtrace-bridge-2";

extern "C" {
    /// Linker-defined: the ELF header of this image, which a shared object
    /// maps at its `l_addr` (its first segment starts at file address 0).
    static __ehdr_start: u8;
}

fn image_offset<T>(p: *const T) -> usize {
    // SAFETY: only the address of the linker symbol is taken.
    (p as usize).wrapping_sub(core::ptr::addr_of!(__ehdr_start) as usize)
}

unsafe extern "C" fn begin(
    kind: u32,
    name: *const c_char,
    mode: c_int,
    lmid: c_long,
    caller: *const LinkMap,
) -> u64 {
    crate::guard(0, || {
        crate::audit::request_begin(kind, name, mode, lmid, caller as usize)
    })
}

unsafe extern "C" fn end(token: u64, result: *mut c_void, errno: c_int) {
    crate::guard((), || {
        crate::audit::request_end(token, result as usize, errno)
    })
}

unsafe extern "C" fn error_text(text: *const c_char) {
    crate::guard((), || crate::audit::error_text(text))
}

unsafe extern "C" fn thread_exit() {
    crate::guard((), || crate::audit::thread_exit())
}

unsafe extern "C" fn forked() {
    crate::guard((), crate::calls::forked)
}

static TABLE: Bridge = Bridge {
    begin,
    end,
    error_text,
    thread_exit,
    forked,
};

/// This copy's own file name, as the loader knows it (set in `la_version`).
static OWN_BASENAME: AtomicUsize = AtomicUsize::new(0);
/// This copy's file identity (device, inode).
static OWN_DEV: AtomicUsize = AtomicUsize::new(0);
static OWN_INO: AtomicUsize = AtomicUsize::new(0);

/// Remembers this copy's file name (audit role, from `la_version`).
pub fn init_own_name() {
    let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
    // SAFETY: dladdr on an address inside this image.
    if unsafe { libc::dladdr(core::ptr::addr_of!(MAGIC).cast(), &mut info) } != 0
        && !info.dli_fname.is_null()
    {
        // SAFETY: dladdr returns a NUL-terminated name owned by the loader.
        let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_bytes();
        let base = cudnn_trace_format::basename(name).to_vec();
        if let Some(st) = crate::elf::stat(name) {
            OWN_DEV.store(st.st_dev as usize, Ordering::Release);
            OWN_INO.store(st.st_ino as usize, Ordering::Release);
        }
        OWN_BASENAME.store(Box::into_raw(Box::new(base)) as usize, Ordering::Release);
    }
}

/// Audit role, in `la_objopen`: if `map` is this library mapped into the
/// main namespace (the preload copy), give it the bridge table.
///
/// # Safety
/// `map` is a link map the loader just mapped.
pub unsafe fn maybe_install(map: *mut LinkMap, l_name: &[u8], lmid: i64) {
    let own = OWN_BASENAME.load(Ordering::Acquire) as *const Vec<u8>;
    if lmid != 0 || own.is_null() {
        return;
    }
    let own: &Vec<u8> = &*own;
    if cudnn_trace_format::basename(l_name) != own.as_slice() {
        return;
    }
    // The same file, not just the same name: only then are the offsets of
    // this image valid in the twin's (another library called libcdtrace.so,
    // or another build of the shim, must never be written into).
    let Some(st) = crate::elf::stat(l_name) else {
        return;
    };
    if st.st_dev as usize != OWN_DEV.load(Ordering::Acquire)
        || st.st_ino as usize != OWN_INO.load(Ordering::Acquire)
    {
        return;
    }
    let base = (*map).l_addr;
    let twin_magic = (base + image_offset(core::ptr::addr_of!(MAGIC))) as *const [u8; 16];
    if core::ptr::read_volatile(twin_magic) != MAGIC {
        return;
    }
    let twin_bridge =
        (base + image_offset(core::ptr::addr_of!(BRIDGE))) as *const AtomicPtr<Bridge>;
    (*twin_bridge).store(&TABLE as *const Bridge as *mut Bridge, Ordering::Release);
    crate::audit::mark_preload_active();
}
