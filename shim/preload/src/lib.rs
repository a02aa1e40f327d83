//! `libcdtrace_preload.so`, the `LD_PRELOAD` helper of cudnn-trace.
//!
//! It hooks `dlopen`, `dlmopen` and `dlerror` in the program's namespace to
//! learn what the audit interface does not report: the *result* of each
//! request (a failed load, a request served by an object already there) and
//! the error text the program reads. Everything else (the trace, the pin,
//! the calls) lives in the audit library, `libcdtrace.so`, which fills this
//! helper's bridge slot when the loader maps it (`cdtrace_abi::bridge`).
//! Without the audit library the hooks pass every call straight through.
//!
//! # Why a library of its own, without std
//!
//! The audit library lives in a namespace of its own: what it needs
//! (`libc.so.6`, and on glibc before 2.34 `libpthread.so.0`, `libdl.so.2`,
//! `librt.so.1`, which Rust's std then lists as DT_NEEDED) stays there, out
//! of the program's sight. Whatever a library in `LD_PRELOAD`
//! needs enters the program's own link map, before the program's own
//! libraries: a program that `dlopen(..., RTLD_NOLOAD)`s `libgcc_s.so.1`,
//! walks its link map or loads `libgcc_s` itself later (gdk-pixbuf: 6th
//! instead of 49th) sees the difference (issue 14). Even `libc.so.6` as a
//! DT_NEEDED would move libc ahead of the program's own second-level
//! dependencies in the breadth-first load order.
//!
//! So this helper is `no_std`, built with `panic = "abort"`, links no
//! library at all (no DT_NEEDED) and needs one symbol from the loader,
//! `_r_debug`, which every glibc's ld.so exports. Each libc function it calls
//! (`dlsym`, `dlvsym`, `_dl_find_object` or `dladdr1`, `pthread_key_create`,
//! `pthread_getspecific`/`setspecific`, `__register_atfork`,
//! `__errno_location`) it finds in the main namespace's own objects with
//! `cdtrace_abi::elf` (libc from 2.34; libdl and libpthread before), exactly
//! the definitions the program's own calls reach; what it does not find it
//! does without. It needs nothing newer than glibc 2.17 (issue 11).
//!
//! Alternatives weighed: the audit library's own dependencies in the main
//! namespace (its unwinder is linked in, so no `libgcc_s`, but std still needs
//! `libc.so.6`, and `libpthread`/`libdl`/`librt` on old glibc); a `no_std`
//! audit library would mean rewriting the trace writer, the pin and the call
//! recording without `alloc` and without `catch_unwind`, for nothing (the audit
//! namespace's dependencies are harmless). Keeping the preload role tiny also
//! keeps what runs on every `dlopen` in the program small enough to read at
//! once.
//!
//! # Rules
//!
//! Never unwind across FFI: nothing here can panic (no indexing, no
//! arithmetic that can overflow in a checked way, no allocation); a panic
//! would be a link error (see the panic handler), which `tests/preload.rs`
//! catches by listing the library's undefined symbols. No lock, no thread,
//! no allocation; the program's `errno` and `dlerror()` state are kept.

#![no_std]

mod hooks;
mod program;

use cdtrace_abi::bridge::{Bridge, ABI};
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// The ABI string the audit library checks before filling the slot.
#[unsafe(no_mangle)]
#[used]
#[allow(non_upper_case_globals)]
pub static cdtrace_preload_abi: [u8; 16] = ABI;

/// The audit library's table, stored by it when it sees this library mapped
/// (null: no audit library, or another version of it).
#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)]
pub static cdtrace_preload_bridge: AtomicPtr<Bridge> = AtomicPtr::new(core::ptr::null_mut());

/// Unloads counted by the audit library (`cdtrace_abi::bridge::UNLOADS_SYMBOL`).
#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)]
pub static cdtrace_preload_unloads: AtomicU64 = AtomicU64::new(0);

/// The bridge, or None.
fn bridge() -> Option<&'static Bridge> {
    // SAFETY: the audit library stores a pointer to a static table that
    // lives as long as the process.
    unsafe { cdtrace_preload_bridge.load(Ordering::Acquire).as_ref() }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // There is no unwinding here and nowhere to report to. No code path of
    // this library panics; if one ever did, this reference to a symbol that
    // exists nowhere makes the build fail its symbol check (tests/preload.rs)
    // instead of leaving a path that could take the program down.
    extern "C" {
        fn cdtrace_preload_must_never_panic() -> !;
    }
    // SAFETY: never linked, never called.
    unsafe { cdtrace_preload_must_never_panic() }
}

/// Constructor. It resolves the real `dlopen`/`dlmopen`/`dlerror` now,
/// while no loader error can be pending (any successful dl* call clears the
/// program's `dlerror()` state), whether or not tracing is on: the hooks
/// are exported either way. Hooks still cope with being called earlier
/// (libraries' constructors run before this one).
extern "C" fn init() {
    hooks::warm_up();
    if bridge().is_some() {
        hooks::watch_fork();
    }
}

#[used]
#[unsafe(link_section = ".init_array")]
static INIT: extern "C" fn() = init;
