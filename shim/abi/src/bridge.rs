//! The bridge between the audit library and the preload helper.
//!
//! The audit library (`libcdtrace.so`, loaded by `LD_AUDIT` in a namespace of
//! its own, with its own libc) sees every search and every object the loader
//! maps. The preload helper (`libcdtrace_preload.so`, loaded by `LD_PRELOAD`
//! into the program's namespace) hooks `dlopen`, `dlmopen` and `dlerror` to
//! learn what the audit interface does not report (a failed load, a request
//! served by an object already there). Statics are not shared between the
//! two, so the audit library hands the helper a table of functions to call.
//!
//! The helper exports two data symbols: [`ABI_SYMBOL`], holding [`ABI`], and
//! [`SLOT_SYMBOL`], an `AtomicPtr<Bridge>` that starts null. When the audit
//! library sees the helper mapped into the main namespace (`la_objopen`,
//! before any of the helper's code can run), it finds both in the helper's
//! dynamic symbol table, checks the ABI string (a helper of another
//! version is left alone: its hooks then pass every call straight through)
//! and stores its table's address in the slot.

use core::ffi::{c_char, c_int, c_long, c_void};

use crate::elf::LinkMap;

/// Calls from the preload helper into the audit library. Every function
/// preserves nothing on its own: the helper saves and restores the program's
/// `errno` around each call.
#[repr(C)]
pub struct Bridge {
    /// A `dlopen` (kind 0) or `dlmopen` (kind 1) is starting; returns a token
    /// (0: not traced). `flags`: [`EXIT_WATCHED`] or 0.
    pub begin: unsafe extern "C" fn(
        kind: u32,
        name: *const c_char,
        mode: c_int,
        lmid: c_long,
        caller: *const LinkMap,
        flags: u32,
    ) -> u64,
    /// It returned `result` with `errno`.
    pub end: unsafe extern "C" fn(token: u64, result: *mut c_void, errno: c_int),
    /// The program read this text from `dlerror()`.
    pub error_text: unsafe extern "C" fn(text: *const c_char),
    /// The calling thread is exiting (from a pthread key destructor, which
    /// the program's libc runs; the audit namespace's libc never sees it).
    pub thread_exit: unsafe extern "C" fn(),
    /// In a child just forked (from the program's libc's fork handlers):
    /// call counts start again from zero.
    pub forked: unsafe extern "C" fn(),
}

/// `begin` flag: the helper will call `thread_exit` when the calling thread
/// exits, so the audit library may keep that thread's state between
/// requests instead of allocating it for each.
pub const EXIT_WATCHED: u32 = 1;

/// The helper's exported ABI string: its name and the layout version of
/// [`Bridge`]. Change the number whenever [`Bridge`] changes.
pub const ABI: [u8; 16] = *b"cdtrace-bridge-4";

/// Name of the helper's exported `[u8; 16]` holding [`ABI`].
pub const ABI_SYMBOL: &[u8] = b"cdtrace_preload_abi";

/// Name of the helper's exported `AtomicPtr<Bridge>` the audit library fills.
pub const SLOT_SYMBOL: &[u8] = b"cdtrace_preload_bridge";

/// Name of the helper's exported `AtomicU64` counting unloads: 0 until the
/// audit library installs the bridge, which sets it to 1 and then adds one
/// for every object the loader unloads (`la_objclose`). While it stays the
/// same, every object mapped before is still mapped where it was, so the
/// helper may trust what it checked about a caller then.
pub const UNLOADS_SYMBOL: &[u8] = b"cdtrace_preload_unloads";

/// The helper's file name, as the launcher installs it next to
/// `libcdtrace.so`.
pub const PRELOAD_FILE: &str = "libcdtrace_preload.so";
