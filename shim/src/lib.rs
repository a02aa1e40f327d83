//! `libcdtrace.so`, the rtld-audit library cudnn-trace injects into traced
//! processes (`LD_AUDIT`).
//!
//! In its own namespace, with its own libc, it sees every search step and
//! every object the loader maps ([`audit`]), including DT_NEEDED
//! dependencies, loads from `RTLD_DEEPBIND` libraries and other namespaces,
//! without wrapping any function, so the program's loads stay exactly as
//! they were. It writes the trace ([`trace`]), records the program's calls
//! to a few cuDNN / CUDA functions through `la_symbind64` ([`calls`]), asks
//! those libraries for their versions where that is proven free of side
//! effects ([`versions`]), and can pin cuDNN to a directory ([`pin`]). It
//! tells CUDA libraries by identity, renamed copies and stubs included
//! ([`family`]), and keeps the start-up's events and its search in progress
//! in a shared mapping of the trace file, so that a library missing at
//! start-up (ld.so's `_exit(127)`) is still on disk ([`startup`]).
//!
//! Its partner in the program's own namespace is the preload helper,
//! `libcdtrace_preload.so` (`shim/preload`, loaded by `LD_PRELOAD`): it hooks
//! `dlopen`, `dlmopen` and `dlerror` only to learn results the audit
//! interface does not report (a failed load, a request served by a library
//! already there), and hands them over through [`bridge`]. The helper links
//! no library at all, so that nothing but itself enters the program's link
//! map (issue 14; its module docs say why it is a library of its own).
//!
//! Rules everything here follows: never panic across FFI (every entry point
//! runs in [`guard`]); never hold a lock across a call into the loader; no
//! thread, timer or signal handler; one `write(2)` per event; preserve
//! `errno` and the `dlerror()` state of the program.

mod alloc;
mod audit;
mod bridge;
mod calls;
mod elf;
mod environ;
mod family;
mod floor;
mod ids;
mod lock;
mod pin;
mod reuses;
mod say;
mod sink;
mod startup;
mod sys;
mod trace;
mod trim;
mod versions;

use core::ffi::{c_char, c_long};
use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use sys::LinkMap;

// The unwinder (Cargo.toml says why it is linked in): nothing names it, so
// it is named here for the linker to keep its `_Unwind_*` definitions.
use unwinding as _;

/// Never the audit libc's malloc: see `alloc.rs`.
#[global_allocator]
static ALLOC: alloc::ShimAlloc = alloc::ShimAlloc;

/// Runs `f`, turning a panic into `default`: a bug in the shim must cost a
/// trace event, never the traced program.
pub fn guard<R>(default: R, f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(default)
}

/// A panic in the shim is recorded in the trace, never printed on the
/// program's stderr.
fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            trace::note("error", &format!("cudnn-trace shim bug: {info}"))
        }));
    }));
}

/// rtld-audit entry point: called once when the module is loaded. Returning
/// 0 makes glibc drop the module, which is how the shim stays out of the way
/// when neither a trace directory nor a pin was given (or the process runs
/// in secure-execution mode: `say::secure_execution`).
///
/// Except where glibc cannot take a refusal: before 2.34, unloading a
/// refused module asserts that its namespace is empty, which it is not when
/// the module needs `libpthread.so.0` (NODELETE; Rust's std needs it when
/// the shim is built on such a glibc), and every program would die
/// (`Inconsistency detected by ld.so: rtld.c: … unload_audit_module`). So
/// there the module stays, and every callback does nothing (they all check
/// [`tracing`] or the pin). The shim the CLI ships is built on a newer
/// glibc and needs no libpthread: it is refused, and leaves nothing behind,
/// which matters there, because any audit module that stays makes glibc
/// before 2.35 crash a program's `dlmopen(LM_ID_NEWLM)` (BZ #28062).
#[unsafe(no_mangle)]
pub extern "C" fn la_version(version: u32) -> u32 {
    guard(0, || {
        if version == 0 {
            return 0;
        }
        let tracing = trace::config().is_some();
        let pinned = pin::settings().is_some();
        if !tracing && !pinned {
            let refusal_safe =
                sys::glibc_at_least(2, 34) || !sys::own_namespace_has(b"libpthread.so.0");
            return if refusal_safe {
                0
            } else {
                version.min(sys::LAV_CURRENT)
            };
        }
        // Before anything takes a lock or writes: from here on the pid and
        // tid cost no system call.
        ids::init();
        quiet_panics();
        say::init();
        if tracing {
            environ::init();
            calls::init();
            trace::ensure_open();
        }
        if pinned {
            // Read now, so that a directory that cannot be read is said at
            // the start of every process of the tree (and so, by its top
            // alone), not at the first cuDNN load of each.
            pin::check();
        }
        version.min(sys::LAV_CURRENT)
    })
}

/// The audit callbacks below only trace; a pin alone needs none of them.
fn tracing() -> bool {
    trace::config().is_some()
}

/// `CUDNN_TRACE_SELF_TEST=panic`: a panic, once per process image, where
/// a bug in the shim would raise one. [`guard`] must turn it into a trace
/// note (the panic hook's) and the object's missing record, the program
/// none the wiser: what the unwinder the shim links must do.
fn self_test() {
    use std::sync::atomic::{AtomicBool, Ordering};
    static DONE: AtomicBool = AtomicBool::new(false);
    if trace::config().is_some_and(|c| c.self_test_panic) && !DONE.swap(true, Ordering::Relaxed) {
        panic!(
            "self-test ({}=panic)",
            cudnn_trace_format::envvar::SELF_TEST
        );
    }
}

/// # Safety
/// Called by glibc's dynamic linker with a valid name and cookie.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn la_objsearch(
    name: *const c_char,
    cookie: *mut usize,
    flag: u32,
) -> *mut c_char {
    if name.is_null() {
        return name as *mut c_char;
    }
    // The pin rewrites a cuDNN name before any directory is searched;
    // everything else keeps the name as given: observing must not change
    // the search.
    let decision = if flag == sys::LA_SER_ORIG {
        guard(None, || pin::decide(CStr::from_ptr(name).to_bytes()))
    } else {
        None
    };
    if tracing() {
        guard((), || {
            audit::objsearch(name, cookie, flag, decision.as_ref())
        });
    }
    match decision.and_then(|d| d.to) {
        Some(to) => to.as_ptr() as *mut c_char,
        None => name as *mut c_char,
    }
}

/// # Safety
/// Called by glibc's dynamic linker with a live link map.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn la_objopen(map: *mut LinkMap, lmid: c_long, cookie: *mut usize) -> u32 {
    if map.is_null() || !tracing() {
        return 0;
    }
    let (realpath, family) = guard((None, None), || {
        self_test();
        audit::objopen(map, lmid, cookie)
    });
    // LA_FLG_BINDTO for cuDNN/cudart/libcuda objects, LA_FLG_BINDFROM for
    // the objects that link against them; 0 for everything else, whose
    // bindings then never reach `la_symbind64` (see `calls.rs`).
    guard(0, || calls::objopen(map, lmid, realpath, family))
}

/// Called by glibc for a PLT binding between an object with
/// `LA_FLG_BINDFROM` and one with `LA_FLG_BINDTO`, and for a `dlsym` result
/// that involves either. Returns the address the program will use.
///
/// # Safety
/// Called by glibc's dynamic linker with a valid symbol and cookies.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn la_symbind64(
    sym: *mut sys::Elf64Sym,
    _ndx: u32,
    refcook: *mut usize,
    defcook: *mut usize,
    flags: *mut u32,
    symname: *const c_char,
) -> usize {
    if sym.is_null() {
        return 0;
    }
    let value = (*sym).st_value as usize;
    guard(value, || {
        calls::symbind(value, refcook, defcook, flags, symname)
    })
}

/// # Safety
/// Called by glibc's dynamic linker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn la_objclose(cookie: *mut usize) -> u32 {
    bridge::object_unloaded();
    if tracing() {
        guard((), || audit::objclose(cookie));
    }
    0
}

/// # Safety
/// Called by glibc's dynamic linker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn la_activity(_cookie: *mut usize, flag: u32) {
    if tracing() {
        guard((), || audit::activity(flag));
    }
}

/// # Safety
/// Called by glibc's dynamic linker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn la_preinit(_cookie: *mut usize) {
    guard((), audit::preinit);
    if tracing() {
        // SAFETY: start-up is over and no program code has run yet.
        guard((), || unsafe { environ::locate() });
        // Every start-up object is relocated and initialised now.
        guard((), versions::startup);
    }
    // Last: the shim's start-up work is done. (A module that stays dormant,
    // neither tracing nor pinning, does nothing at all, this included.)
    if tracing() || pin::settings().is_some() {
        guard((), trim::after_startup);
    }
}
