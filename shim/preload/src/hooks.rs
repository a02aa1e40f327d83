//! The hooks: learn the *result* of each `dlopen`/`dlmopen` without changing it.
//!
//! glibc takes the caller of `dlopen` from its return address and uses it
//! for the caller's RPATH/RUNPATH/`$ORIGIN`, its namespace and `RTLD_NEXT`
//! (`dlfcn/dlopen.c`, `elf/dl-open.c`). A wrapper that simply calls the real
//! `dlopen` makes the shim the caller, so the RUNPATH searched is the shim's,
//! not the caller's (dlopen(3) \[R34\]): under such a wrapper cuDNN's
//! sub-libraries, found through cuDNN's own `$ORIGIN`, are not found next to
//! PyTorch's pip cuDNN (<https://github.com/bloomberg/memray/issues/212>) or
//! come from another cuDNN on the machine.
//!
//! So the hooks here never *call* the real function from their own frame.
//! They jump to it with a return address that lies inside the real caller:
//! the final `ret` of the caller's `_fini` (or `_init`), whose code is
//! `add rsp, 8; ret` in every object linked with crti/crtn. The real `dlopen`
//! sees the real caller, returns into that `ret`, which returns into our
//! continuation, which reports the result and returns to the real caller:
//!
//! ```text
//!   stack at the jump:  [G = ret in caller's _fini] [C = continuation] [token] [pad] [R = caller]
//! ```
//!
//! When no such `ret` is found, or a CET shadow stack is active (it would
//! reject the detour), the hook is a pure tail jump: glibc sees the caller
//! exactly as without the shim, and the audit library learns the outcome
//! later. The hooks do nothing at all unless the audit library installed
//! the bridge.

use crate::bridge;
use crate::program::{self, keeping_errno};
use cdtrace_abi::bridge::EXIT_WATCHED;
use cdtrace_abi::elf::{self, DlFindObject, DlInfo, LinkMap, DT_FINI, DT_INIT, RTLD_DL_LINKMAP};
use core::ffi::{c_char, c_int, c_void};
use core::sync::atomic::{fence, AtomicU64, AtomicU8, AtomicUsize, Ordering};

/// Real `dlopen` and `dlmopen`, indexed by hook kind (read by the stubs).
static REAL: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];
static REAL_DLERROR: AtomicUsize = AtomicUsize::new(0);

const KIND_DLOPEN: usize = 0;
const KIND_DLMOPEN: usize = 1;

#[cfg(target_arch = "x86_64")]
const VERSIONS: &[&[u8]] = &[b"GLIBC_2.34\0", b"GLIBC_2.2.5\0"];
#[cfg(target_arch = "aarch64")]
const VERSIONS: &[&[u8]] = &[b"GLIBC_2.34\0", b"GLIBC_2.17\0"];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const VERSIONS: &[&[u8]] = &[];

/// The next definition of `name` after this library: libc's, or another
/// interposer's that was preloaded after us (calls must reach it exactly as
/// without the shim, so no version is asked for: `dlvsym` would skip an
/// unversioned interposer and go straight to libc).
///
/// Any successful dl* call clears the program's pending `dlerror()` text, so
/// this must run before a loader error can be pending: from the constructor
/// and in the `dlopen` hook before the real call.
fn resolve(name: &[u8], slot: &AtomicUsize) -> usize {
    let v = slot.load(Ordering::Acquire);
    if v != 0 {
        return v;
    }
    // SAFETY: NUL-terminated strings; dlsym and dlvsym are not hooked.
    let mut p = unsafe { program::dlsym(program::RTLD_NEXT, name.as_ptr().cast()) };
    for ver in VERSIONS {
        if !p.is_null() {
            break;
        }
        // SAFETY: as above.
        p = unsafe {
            program::dlvsym(
                program::RTLD_NEXT,
                name.as_ptr().cast(),
                ver.as_ptr().cast(),
            )
        };
    }
    slot.store(p as usize, Ordering::Release);
    p as usize
}

fn resolve_kind(kind: usize) -> usize {
    match kind {
        KIND_DLOPEN => resolve(b"dlopen\0", &REAL[0]),
        _ => resolve(b"dlmopen\0", &REAL[1]),
    }
}

/// 0 unknown, 1 active, 2 not active.
static SHADOW_STACK: AtomicU8 = AtomicU8::new(0);

/// Whether a CET user-space shadow stack is enabled (Linux 6.6+
/// `ARCH_SHSTK_STATUS`): returning through a detour would fault under it.
fn shadow_stack_active() -> bool {
    match SHADOW_STACK.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            #[cfg(target_arch = "x86_64")]
            let active = {
                const SYS_ARCH_PRCTL: i64 = 158;
                const ARCH_SHSTK_STATUS: i64 = 0x5005;
                let mut features: u64 = 0;
                let r: i64;
                // SAFETY: arch_prctl(ARCH_SHSTK_STATUS, &features): the kernel
                // writes one u64; older kernels return -EINVAL. A raw system
                // call: this library links no libc (and leaves errno alone).
                unsafe {
                    core::arch::asm!(
                        "syscall",
                        inlateout("rax") SYS_ARCH_PRCTL => r,
                        in("rdi") ARCH_SHSTK_STATUS,
                        in("rsi") core::ptr::addr_of_mut!(features),
                        lateout("rcx") _,
                        lateout("r11") _,
                        options(nostack),
                    );
                }
                r == 0 && features & 1 != 0
            };
            #[cfg(not(target_arch = "x86_64"))]
            let active = true;
            SHADOW_STACK.store(if active { 1 } else { 2 }, Ordering::Relaxed);
            active
        }
    }
}

/// The link map of the object containing `pc`, and the start and end of its
/// mapping (end 0: not known).
unsafe fn find_object(pc: usize) -> Option<(*mut LinkMap, usize, usize)> {
    if let Some(f) = program::DL_FIND_OBJECT.get() {
        // glibc 2.35+: lock-free and cheap.
        type FindObject = unsafe extern "C" fn(*mut c_void, *mut DlFindObject) -> c_int;
        let find: FindObject = core::mem::transmute(f);
        let mut r: DlFindObject = core::mem::zeroed();
        if find(pc as *mut c_void, &mut r) == 0 && !r.dlfo_link_map.is_null() {
            let (start, end) = (r.dlfo_map_start as usize, r.dlfo_map_end as usize);
            return Some((r.dlfo_link_map, start, end));
        }
        return None;
    }
    let f = program::DLADDR1.get()?;
    type Dladdr1 =
        unsafe extern "C" fn(*const c_void, *mut DlInfo, *mut *mut c_void, c_int) -> c_int;
    let dladdr1: Dladdr1 = core::mem::transmute(f);
    let mut info: DlInfo = core::mem::zeroed();
    let mut map: *mut LinkMap = core::ptr::null_mut();
    let ok = dladdr1(
        pc as *const c_void,
        &mut info,
        &mut map as *mut *mut LinkMap as *mut *mut c_void,
        RTLD_DL_LINKMAP,
    );
    (ok != 0 && !map.is_null()).then_some((map, info.dli_fbase as usize, 0))
}

/// Whether `[addr, addr+len)` lies in an executable PT_LOAD of the object
/// whose ELF header is mapped at `ehdr` (with load bias `bias`).
unsafe fn in_exec_segment(ehdr: usize, bias: usize, addr: usize, len: usize) -> bool {
    let e = ehdr as *const u8;
    if ehdr == 0 || !elf::bytes_eq(core::slice::from_raw_parts(e, 4), b"\x7fELF") {
        return false;
    }
    let phoff = core::ptr::read_unaligned(e.add(32) as *const u64) as usize;
    let phentsize = core::ptr::read_unaligned(e.add(54) as *const u16) as usize;
    let phnum = core::ptr::read_unaligned(e.add(56) as *const u16) as usize;
    // The program headers must be in the first page we know is mapped.
    if phentsize < 56 || phnum == 0 || phoff.saturating_add(phentsize * phnum) > 4096 {
        return false;
    }
    for i in 0..phnum {
        let p = e.add(phoff + i * phentsize);
        let p_type = core::ptr::read_unaligned(p as *const u32);
        let p_flags = core::ptr::read_unaligned(p.add(4) as *const u32);
        let vaddr = core::ptr::read_unaligned(p.add(16) as *const u64) as usize;
        let memsz = core::ptr::read_unaligned(p.add(40) as *const u64) as usize;
        const PT_LOAD: u32 = 1;
        const PF_X: u32 = 1;
        let start = bias.wrapping_add(vaddr);
        if p_type == PT_LOAD
            && p_flags & PF_X != 0
            && addr >= start
            && addr.wrapping_add(len) <= start.wrapping_add(memsz)
        {
            return true;
        }
    }
    false
}

/// A `ret` inside the object `map` whose stack effect is a plain return
/// (CFA = rsp + 8): the end of crti/crtn's `_fini`/`_init`.
#[cfg(target_arch = "x86_64")]
unsafe fn find_gadget(map: *mut LinkMap, ehdr: usize) -> usize {
    let bias = (*map).l_addr;
    let (mut fini, mut init) = (0usize, 0usize);
    for (tag, val) in elf::dyn_entries(map) {
        match tag {
            DT_FINI => fini = val as usize,
            DT_INIT => init = val as usize,
            _ => {}
        }
    }
    const SCAN: usize = 32;
    for f in [fini, init] {
        if f == 0 {
            continue;
        }
        // DT_INIT/DT_FINI are not relocated in place by glibc; accept either form.
        for addr in [bias.wrapping_add(f), f] {
            if !in_exec_segment(ehdr, bias, addr, SCAN) {
                continue;
            }
            let code = core::slice::from_raw_parts(addr as *const u8, SCAN);
            // add rsp, 8 ; ret
            if let Some(i) = code.windows(5).position(|w| elf::bytes_eq(w, &GADGET)) {
                return addr + i + 4;
            }
        }
    }
    0
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn find_gadget(_map: *mut LinkMap, _ehdr: usize) -> usize {
    0
}

/// `add rsp, 8 ; ret`, which [`find_gadget`] looks for (the gadget is its `ret`).
const GADGET: [u8; 5] = [0x48, 0x83, 0xc4, 0x08, 0xc3];

/// Whether `g` still holds the gadget's instruction in an executable
/// segment of `map`, whose ELF header is at `ehdr` (the object may have been
/// replaced at the same address since `g` was found in it).
unsafe fn gadget_still_there(map: *mut LinkMap, ehdr: usize, g: usize) -> bool {
    let at = g.wrapping_sub(4);
    g > 4
        && in_exec_segment(ehdr, (*map).l_addr, at, GADGET.len())
        && elf::bytes_eq(core::slice::from_raw_parts(at as *const u8, 5), &GADGET)
}

/// The last caller found, and the gadget found in it: a program calls
/// `dlopen` from a few places, and finding a gadget reads the object's
/// dynamic section, program headers and code (most of the hook's cost).
/// While the audit library counts no unload since it was checked
/// (`cdtrace_abi::bridge::UNLOADS_SYMBOL`), a return address inside its
/// mapping is that caller, gadget included, with no look at its ELF headers:
/// each line read after the loader's walk over every loaded object's name
/// comes from far away (issue 10). After an unload, the gadget is checked in
/// place before it is used again.
#[derive(Clone, Copy)]
struct Caller {
    map: usize,
    /// Its mapping, `[start, end)`; `end` 0 when not known (`dladdr1`).
    start: usize,
    end: usize,
    gadget: usize,
    /// The unload count when it was checked (0: not counted).
    checked_at: u64,
}

/// [`Caller`] as a sequence lock, since a reader must never pair one
/// thread's caller with another's gadget: `CACHE_SEQ` is odd while a thread
/// writes.
static CACHE_SEQ: AtomicU64 = AtomicU64::new(0);
static CACHE_MAP: AtomicUsize = AtomicUsize::new(0);
static CACHE_START: AtomicUsize = AtomicUsize::new(0);
static CACHE_END: AtomicUsize = AtomicUsize::new(0);
static CACHE_GADGET: AtomicUsize = AtomicUsize::new(0);
static CACHE_UNLOADS: AtomicU64 = AtomicU64::new(0);

fn unloads() -> u64 {
    crate::cdtrace_preload_unloads.load(Ordering::Acquire)
}

/// The last caller, if no thread is writing it.
fn last_caller() -> Option<Caller> {
    let seq = CACHE_SEQ.load(Ordering::Acquire);
    if seq & 1 != 0 {
        return None;
    }
    let c = Caller {
        map: CACHE_MAP.load(Ordering::Relaxed),
        start: CACHE_START.load(Ordering::Relaxed),
        end: CACHE_END.load(Ordering::Relaxed),
        gadget: CACHE_GADGET.load(Ordering::Relaxed),
        checked_at: CACHE_UNLOADS.load(Ordering::Relaxed),
    };
    fence(Ordering::Acquire);
    (CACHE_SEQ.load(Ordering::Relaxed) == seq && c.gadget != 0).then_some(c)
}

/// Remembers `c`; skipped while another thread writes.
fn remember_caller(c: Caller) {
    let seq = CACHE_SEQ.load(Ordering::Relaxed);
    if seq & 1 != 0
        || CACHE_SEQ
            .compare_exchange(seq, seq + 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    fence(Ordering::Release);
    CACHE_MAP.store(c.map, Ordering::Relaxed);
    CACHE_START.store(c.start, Ordering::Relaxed);
    CACHE_END.store(c.end, Ordering::Relaxed);
    CACHE_GADGET.store(c.gadget, Ordering::Relaxed);
    CACHE_UNLOADS.store(c.checked_at, Ordering::Relaxed);
    CACHE_SEQ.store(seq + 2, Ordering::Release);
}

/// The link map of the object that called and the gadget to return through
/// it (see the module docs), or None: then the hook is a plain tail jump.
unsafe fn caller_and_gadget(ret: usize) -> Option<(*mut LinkMap, usize)> {
    // Read before any check: an unload during one makes what it found stale.
    let now = unloads();
    let last = last_caller();
    if let Some(c) = last {
        if now != 0 && c.checked_at == now && (c.start..c.end).contains(&ret) {
            return Some((c.map as *mut LinkMap, c.gadget));
        }
    }
    let (map, start, end) = find_object(ret)?;
    let gadget = match last {
        Some(c) if c.map == map as usize && gadget_still_there(map, start, c.gadget) => c.gadget,
        _ => find_gadget(map, start),
    };
    if gadget == 0 {
        return None;
    }
    remember_caller(Caller {
        map: map as usize,
        start,
        end,
        gadget,
        checked_at: now,
    });
    Some((map, gadget))
}

#[repr(C)]
struct Enter {
    gadget: usize,
    token: u64,
}

/// Called by the stubs before the real function. Returns the detour address
/// (0: plain tail jump) and the bridge token. Preserves errno.
extern "C" fn cdt_enter(kind: usize, a0: usize, a1: usize, a2: usize, ret: usize) -> Enter {
    keeping_errno(|| {
        // The stub jumps through REAL[kind] next: it must be resolved first.
        // dlerror too: once this dlopen fails, resolving it would clear the text.
        warm_up();
        if resolve_kind(kind) == 0 {
            return Enter {
                gadget: 0,
                token: 0,
            };
        }
        // SAFETY: the arguments are the program's, as the stub received them.
        unsafe { enter(kind, a0, a1, a2, ret) }
    })
}

/// State of [`EXIT_KEY`]: 0 not created, 1 being created, 2 ready, 3 failed.
static EXIT_KEY_STATE: AtomicU8 = AtomicU8::new(0);
static EXIT_KEY: AtomicUsize = AtomicUsize::new(0);

/// Destructor of [`EXIT_KEY`], run by the program's libc when a thread that
/// used the hooks exits.
unsafe extern "C" fn on_thread_exit(_value: *mut c_void) {
    if let Some(b) = bridge() {
        keeping_errno(|| (b.thread_exit)());
    }
}

type KeyCreate = unsafe extern "C" fn(*mut u32, Option<unsafe extern "C" fn(*mut c_void)>) -> c_int;
type GetSpecific = unsafe extern "C" fn(u32) -> *mut c_void;
type SetSpecific = unsafe extern "C" fn(u32, *const c_void) -> c_int;

/// Arranges for [`on_thread_exit`] to run when this thread exits: a load
/// whose outcome the hook could not see (a `dlopen` tail-called from a
/// thread's start routine returns into libc, which has no `_fini` to detour
/// through) is then still judged, before the thread is gone. Without the
/// program's `pthread_key_create` (glibc before 2.34 and no libpthread:
/// then the program has no threads) nothing is done. Returns whether the
/// thread's exit will be reported.
unsafe fn watch_thread_exit() -> bool {
    let (Some(get), Some(set)) = (
        program::PTHREAD_GETSPECIFIC.get(),
        program::PTHREAD_SETSPECIFIC.get(),
    ) else {
        return false;
    };
    let get: GetSpecific = core::mem::transmute(get);
    let set: SetSpecific = core::mem::transmute(set);
    // Any non-null marker.
    let marker = core::ptr::NonNull::<c_void>::dangling().as_ptr();
    match EXIT_KEY_STATE.load(Ordering::Acquire) {
        2 => {
            let key = EXIT_KEY.load(Ordering::Relaxed) as u32;
            !get(key).is_null() || set(key, marker) == 0
        }
        0 if EXIT_KEY_STATE
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok() =>
        {
            let Some(create) = program::PTHREAD_KEY_CREATE.get() else {
                EXIT_KEY_STATE.store(3, Ordering::Release);
                return false;
            };
            let create: KeyCreate = core::mem::transmute(create);
            let mut key: u32 = 0;
            if create(&mut key, Some(on_thread_exit)) == 0 {
                EXIT_KEY.store(key as usize, Ordering::Relaxed);
                EXIT_KEY_STATE.store(2, Ordering::Release);
                set(key, marker) == 0
            } else {
                EXIT_KEY_STATE.store(3, Ordering::Release);
                false
            }
        }
        // Being created by another thread, or failed.
        _ => false,
    }
}

unsafe fn enter(kind: usize, a0: usize, a1: usize, a2: usize, ret: usize) -> Enter {
    let none = Enter {
        gadget: 0,
        token: 0,
    };
    let Some(b) = bridge() else {
        return none;
    };
    let flags = if watch_thread_exit() { EXIT_WATCHED } else { 0 };
    if shadow_stack_active() {
        return none;
    }
    let (name, mode, lmid) = if kind == KIND_DLOPEN {
        (a0 as *const c_char, a1 as c_int, 0)
    } else {
        (a1 as *const c_char, a2 as c_int, a0 as core::ffi::c_long)
    };
    if name.is_null() {
        return none; // dlopen(NULL): the main program, nothing to trace.
    }
    let Some((caller, gadget)) = caller_and_gadget(ret) else {
        return none;
    };
    let token = (b.begin)(kind as u32, name, mode, lmid, caller, flags);
    if token == 0 {
        return none;
    }
    Enter { gadget, token }
}

/// Called by the continuation with the real function's result.
extern "C" fn cdt_leave(token: u64, result: *mut c_void) {
    let slot = program::errno_location();
    // SAFETY: the calling thread's errno slot, or null.
    let errno = if slot.is_null() { 0 } else { unsafe { *slot } };
    if let Some(b) = bridge() {
        // SAFETY: the audit library's entry point; it guards itself.
        keeping_errno(|| unsafe { (b.end)(token, result, errno) });
    }
}

// The stubs. `dlopen(file, mode)` and `dlmopen(lmid, file, mode)` load their
// kind into r11 and share one body. Argument registers are restored before
// the jump, so the real function sees exactly the caller's arguments.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlopen(_file: *const c_char, _mode: c_int) -> *mut c_void {
    core::arch::naked_asm!("xor r11d, r11d", "jmp {common}", common = sym hook_common)
}

#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlmopen(
    _lmid: core::ffi::c_long,
    _file: *const c_char,
    _mode: c_int,
) -> *mut c_void {
    core::arch::naked_asm!("mov r11d, 1", "jmp {common}", common = sym hook_common)
}

#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
unsafe extern "C" fn hook_common() {
    core::arch::naked_asm!(
        // Entry: rdi, rsi, rdx = arguments; r11 = kind; [rsp] = R, rsp = 8 mod 16.
        "push rdi",
        "push rsi",
        "push rdx",
        "push r11",
        "sub rsp, 8", // 40 bytes pushed: rsp = 0 mod 16 for the call
        "mov r8, [rsp + 40]", // R
        "mov rcx, rdx",
        "mov rdx, rsi",
        "mov rsi, rdi",
        "mov rdi, r11",
        "call {enter}", // -> rax = gadget, rdx = token
        "mov r8, rdx",
        "mov r9, rax",
        "add rsp, 8",
        "pop r11",
        "pop rdx",
        "pop rsi",
        "pop rdi", // back to the entry state
        "lea r10, [rip + {real}]",
        "mov r10, [r10 + r11*8]",
        "test r9, r9",
        "jz 2f",
        // Detour: [G][C][token][pad][R]; 32 bytes keep rsp = 8 mod 16.
        "sub rsp, 8",
        "push r8",
        "lea rax, [rip + {cont}]",
        "push rax",
        "push r9",
        "2:",
        "jmp r10",
        enter = sym cdt_enter,
        real = sym REAL,
        cont = sym hook_cont,
    )
}

#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
unsafe extern "C" fn hook_cont() {
    core::arch::naked_asm!(
        // Entered by the `ret` at G: rax = result, [rsp] = token, [rsp+16] = R.
        "push rax", // rsp = 0 mod 16
        "mov rdi, [rsp + 8]",
        "mov rsi, rax",
        "call {leave}",
        "pop rax",
        "add rsp, 16",
        "ret",
        leave = sym cdt_leave,
    )
}

/// `dlerror` is not caller-sensitive, so a plain wrapper is exact. It lets
/// the trace carry the loader's own error text when the program reads it.
///
/// # Safety
/// Called by the program as `dlerror(3)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlerror() -> *mut c_char {
    let mut real = REAL_DLERROR.load(Ordering::Acquire);
    if real == 0 {
        // Called before our constructor (from another library's): resolving
        // with dlsym now would clear the very error the program asks for.
        // Take the next definition without any dl* call instead.
        real = next_definition(b"dlerror");
        if real == 0 {
            real = resolve(b"dlerror\0", &REAL_DLERROR);
        }
    }
    if real == 0 {
        return core::ptr::null_mut();
    }
    let real: unsafe extern "C" fn() -> *mut c_char = core::mem::transmute(real);
    let text = real();
    if !text.is_null() {
        if let Some(b) = bridge() {
            keeping_errno(|| (b.error_text)(text));
        }
    }
    text
}

/// The first definition of function `name` after this library in the main
/// namespace's order (what `dlsym(RTLD_NEXT)` finds for start-up objects),
/// read from the objects' symbol tables: no dl* call.
fn next_definition(name: &[u8]) -> usize {
    let me = program::me();
    // SAFETY: the main namespace's list, as `elf::main_namespace` allows.
    unsafe {
        elf::main_namespace()
            .skip_while(|&m| !core::ptr::eq(m, me))
            .skip(1)
            .find_map(|m| elf::lookup(m, name))
            .unwrap_or(0)
    }
}

/// Child handler of [`watch_fork`], run by the program's libc in a child
/// just forked.
unsafe extern "C" fn after_fork_in_child() {
    if let Some(b) = bridge() {
        (b.forked)();
    }
}

/// Registers [`after_fork_in_child`] with the program's libc (this library
/// is in the program's namespace; the audit library's libc never sees a
/// fork), so that a forked child numbers its own calls from 1.
pub fn watch_fork() {
    type RegisterAtfork = unsafe extern "C" fn(
        Option<unsafe extern "C" fn()>,
        Option<unsafe extern "C" fn()>,
        Option<unsafe extern "C" fn()>,
        *mut c_void,
    ) -> c_int;
    if let Some(f) = program::REGISTER_ATFORK.get() {
        // SAFETY: what pthread_atfork does (glibc `nptl/pthread_atfork.c`);
        // no DSO handle: this library is never unloaded.
        unsafe {
            let register: RegisterAtfork = core::mem::transmute(f);
            register(None, None, Some(after_fork_in_child), core::ptr::null_mut());
        }
    }
}

/// Resolves the real functions early (from the constructor), so the first
/// hooked call does not have to.
pub fn warm_up() {
    resolve_kind(KIND_DLOPEN);
    resolve_kind(KIND_DLMOPEN);
    resolve(b"dlerror\0", &REAL_DLERROR);
}
