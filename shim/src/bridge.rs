//! The audit library's side of the bridge to the preload helper
//! (`cdtrace_abi::bridge` describes the protocol).
//!
//! When the loader maps `libcdtrace_preload.so` into the main namespace
//! (`la_objopen`, before any of its code can run), the audit library finds
//! the helper's ABI string and bridge slot in its dynamic symbol table,
//! checks the string and stores the address of [`TABLE`] in the slot. From
//! then on the helper's hooks report each `dlopen`/`dlmopen` and each
//! `dlerror()` text through these functions, on the program's thread.

use cdtrace_abi::bridge::{
    Bridge, ABI, ABI_SYMBOL, EXIT_WATCHED, PRELOAD_FILE, SLOT_SYMBOL, UNLOADS_SYMBOL,
};
use cdtrace_abi::elf::{basename, lookup_kind, LinkMap, STT_OBJECT};
use core::ffi::{c_char, c_int, c_long, c_void};
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

unsafe extern "C" fn begin(
    kind: u32,
    name: *const c_char,
    mode: c_int,
    lmid: c_long,
    caller: *const LinkMap,
    flags: u32,
) -> u64 {
    let exit_watched = flags & EXIT_WATCHED != 0;
    crate::guard(0, || {
        crate::audit::request_begin(kind, name, mode, lmid, caller as usize, exit_watched)
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

/// The helper's unload counter, once found.
static UNLOADS: AtomicPtr<AtomicU64> = AtomicPtr::new(core::ptr::null_mut());

/// Audit role, in `la_objclose`: an object is being unloaded, so what the
/// helper checked about a caller may no longer hold.
pub fn object_unloaded() {
    let u = UNLOADS.load(Ordering::Acquire);
    if !u.is_null() {
        // SAFETY: the helper's static, mapped for as long as the process
        // runs (it is preloaded, so never unloaded).
        unsafe { (*u).fetch_add(1, Ordering::Release) };
    }
}

static TABLE: Bridge = Bridge {
    begin,
    end,
    error_text,
    thread_exit,
    forked,
};

/// Audit role, in `la_objopen`: if `map` is the preload helper mapped into
/// the main namespace, give it the bridge table. Costs a file-name
/// comparison for every other object.
///
/// # Safety
/// `map` is a link map the loader just mapped.
pub unsafe fn maybe_install(map: *mut LinkMap, l_name: &[u8], lmid: i64) {
    if lmid != 0 || basename(l_name) != PRELOAD_FILE.as_bytes() {
        return;
    }
    // Both symbols are read-only data and a zero-initialised slot of the
    // helper: readable and writable as soon as it is mapped, and never
    // touched by a relocation.
    let Some(abi) = lookup_kind(map, ABI_SYMBOL, STT_OBJECT) else {
        return;
    };
    if core::ptr::read_volatile(abi as *const [u8; 16]) != ABI {
        // Another version of the helper: its hooks pass calls through.
        return;
    }
    let Some(slot) = lookup_kind(map, SLOT_SYMBOL, STT_OBJECT) else {
        return;
    };
    // Unloads are counted from now on (a helper without the counter only
    // loses its shortcut), before the hooks can first run.
    if let Some(u) = lookup_kind(map, UNLOADS_SYMBOL, STT_OBJECT) {
        let u = u as *const AtomicU64;
        (*u).store(1, Ordering::Release);
        UNLOADS.store(u as *mut AtomicU64, Ordering::Release);
    }
    (*(slot as *const AtomicPtr<Bridge>))
        .store(&TABLE as *const Bridge as *mut Bridge, Ordering::Release);
    crate::audit::mark_preload_active();
}
