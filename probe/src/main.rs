//! `cdtrace-probe`, the process in which cudnn-trace asks cuDNN and CUDA
//! library files the versions they report (`core/src/machine/probe.rs` says
//! why that happens in a process of its own, and which files are asked).
//!
//! ```text
//! cdtrace-probe ASK...      each ASK one of:
//!   core PATH               cudnnGetVersion(), cudnnGetCudartVersion(), cudnnGetMaxDeviceVersion()
//!   check PATH FUNCTION     FUNCTION(), a cuDNN sub-library's *VersionCheck, against the core
//!                           library loaded before it (not run when that one did not load)
//!   runtime PATH            cudaRuntimeGetVersion(&v)
//!   driver PATH             cuDriverGetVersion(&v)
//! ```
//!
//! Each PATH is `dlopen`ed with `RTLD_NOW | RTLD_LOCAL` and stays loaded, so
//! that a later check binds to the core library loaded here. On the stdout
//! it was started with it prints one JSON array, an object per ask, in
//! order (`machine::probe::Answer`): `error` (`dlerror()`, a missing
//! function), `version`, `cudart`, `max_device`, `status`, each only when
//! known. Meanwhile fd 1 is the stderr: a library constructor that prints
//! cannot garble the result. Exit status 0, or 2 (and a usage line on
//! stderr) for arguments it cannot read.
//!
//! # Why a program of its own, without std
//!
//! The CLI may be linked statically (its start-up is the launcher's largest
//! fixed cost: docs/benchmarks.md), and a static program cannot `dlopen`
//! libraries built against the system's glibc. This helper is the one
//! dynamically linked program of the tool: `no_std`, `panic = "abort"`, no
//! C runtime objects (`_start` below; `crt1.o` of a glibc 2.34 or later
//! needs `__libc_start_main@GLIBC_2.34`), and the libc functions it calls
//! are bound to their oldest versions, so that it runs on glibc 2.17
//! and later like the rest of the release (`tests/glibc_floor.rs`). libc is
//! initialised by the loader before `_start` (its constructors run from
//! `_dl_init`); the helper ends with `_exit`, after its result is written,
//! so no library destructor can spoil it.

#![no_std]
#![no_main]

use core::ffi::{c_char, c_int, c_void, CStr};

extern "C" {
    // The dl* functions moved from libdl to libc in glibc 2.34, with new
    // default versions; the versions bound below exist in every glibc
    // (libdl.so.2, a DT_NEEDED of this program, defines them before 2.34).
    fn cdt_dlopen(path: *const c_char, flags: c_int) -> *mut c_void;
    fn cdt_dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
    fn cdt_dlerror() -> *const c_char;
    fn write(fd: c_int, buf: *const c_void, n: usize) -> isize;
    fn fcntl(fd: c_int, cmd: c_int, ...) -> c_int;
    fn dup2(old: c_int, new: c_int) -> c_int;
    fn _exit(status: c_int) -> !;
}

#[cfg(target_arch = "x86_64")]
core::arch::global_asm!(
    ".symver cdt_dlopen, dlopen@GLIBC_2.2.5",
    ".symver cdt_dlsym, dlsym@GLIBC_2.2.5",
    ".symver cdt_dlerror, dlerror@GLIBC_2.2.5",
    // The kernel's initial stack: argc, then argv. Aligned for the call
    // as the psABI wants; a zero frame pointer ends backtraces here.
    ".globl _start",
    ".type _start, @function",
    "_start:",
    "xor ebp, ebp",
    "mov rdi, rsp",
    "and rsp, -16",
    "call {main}",
    "ud2",
    main = sym start,
);

#[cfg(target_arch = "aarch64")]
core::arch::global_asm!(
    ".symver cdt_dlopen, dlopen@GLIBC_2.17",
    ".symver cdt_dlsym, dlsym@GLIBC_2.17",
    ".symver cdt_dlerror, dlerror@GLIBC_2.17",
    ".globl _start",
    ".type _start, %function",
    "_start:",
    "mov x29, #0",
    "mov x30, #0",
    "mov x0, sp",
    "bl {main}",
    "brk #0",
    main = sym start,
);

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("cdtrace-probe: _start and the glibc versions are written for x86_64 and aarch64");

const RTLD_NOW: c_int = 2;
const RTLD_LOCAL: c_int = 0;
const F_DUPFD_CLOEXEC: c_int = 1030;

/// `_start`'s continuation: `sp` points at argc, then argv.
unsafe extern "C" fn start(sp: *const usize) -> ! {
    // SAFETY: the kernel's initial stack layout (argc, argv[argc], NULL).
    let (argc, argv) = unsafe { (*sp, sp.add(1) as *const *const c_char) };
    let arg = |i: usize| -> &'static [u8] {
        // SAFETY: i < argc: a NUL-terminated string the kernel copied.
        unsafe { CStr::from_ptr(*argv.add(i)) }.to_bytes()
    };
    let code = run(argc, &arg);
    // SAFETY: ends the process; nothing is left to flush.
    unsafe { _exit(code) }
}

/// The whole program over `argc` arguments read through `arg`; the exit
/// status.
fn run(argc: usize, arg: &dyn Fn(usize) -> &'static [u8]) -> c_int {
    if !valid(argc, arg) {
        say(2, b"usage: cdtrace-probe {core PATH | check PATH FUNCTION | runtime PATH | driver PATH}...\n");
        return 2;
    }
    // SAFETY: descriptor calls on this process's own descriptors.
    let result = unsafe { fcntl(1, F_DUPFD_CLOEXEC, 3) };
    if result < 0 || unsafe { dup2(2, 1) } < 0 {
        say(2, b"cdtrace-probe: cannot set up stdout\n");
        return 1;
    }
    let mut out = Out::new(result);
    out.put(b"[");
    let mut i = 1;
    let mut core_loaded = true;
    while i < argc {
        let (kind, path) = (arg(i), arg(i + 1));
        if i > 1 {
            out.put(b",");
        }
        let answer = match kind {
            b"core" => {
                let (a, loaded) = core(path);
                core_loaded = loaded;
                a
            }
            b"check" => {
                i += 1;
                if core_loaded {
                    check(path, arg(i + 1))
                } else {
                    Answer::failed(&[b"not run: its core library did not load"])
                }
            }
            b"runtime" => int_out(path, b"cudaRuntimeGetVersion"),
            _ => int_out(path, b"cuDriverGetVersion"),
        };
        answer.write(&mut out);
        i += 2;
    }
    out.put(b"]\n");
    if out.flush() {
        0
    } else {
        1
    }
}

/// Whether the arguments are a sequence of whole asks.
fn valid(argc: usize, arg: &dyn Fn(usize) -> &'static [u8]) -> bool {
    let mut i = 1;
    while i < argc {
        let words = match arg(i) {
            b"core" | b"runtime" | b"driver" => 2,
            b"check" => 3,
            _ => return false,
        };
        if i + words > argc {
            return false;
        }
        i += words;
    }
    true
}

/// What one ask got (`machine::probe::Answer`).
#[derive(Default)]
struct Answer<'a> {
    /// Parts of the error text, written one after the other.
    error: Option<[&'a [u8]; 2]>,
    version: Option<i64>,
    cudart: Option<i64>,
    max_device: Option<i64>,
    status: Option<i64>,
}

impl<'a> Answer<'a> {
    fn failed(parts: &[&'a [u8]]) -> Answer<'a> {
        let mut e: [&[u8]; 2] = [b"", b""];
        for (slot, p) in e.iter_mut().zip(parts) {
            *slot = p;
        }
        Answer {
            error: Some(e),
            ..Answer::default()
        }
    }

    /// "it has no FUNCTION".
    fn missing(function: &'a [u8]) -> Answer<'a> {
        Answer::failed(&[b"it has no ", function])
    }

    fn write(&self, out: &mut Out) {
        out.put(b"{");
        let mut first = true;
        let mut key = |out: &mut Out, k: &[u8]| {
            out.put(if first { b"\"" } else { b",\"" });
            first = false;
            out.put(k);
            out.put(b"\":");
        };
        if let Some(parts) = &self.error {
            key(out, b"error");
            out.put(b"\"");
            for p in parts {
                out.string(p);
            }
            out.put(b"\"");
        }
        for (name, v) in [
            (&b"version"[..], self.version),
            (b"cudart", self.cudart),
            (b"max_device", self.max_device),
            (b"status", self.status),
        ] {
            if let Some(v) = v {
                key(out, name);
                out.int(v);
            }
        }
        out.put(b"}");
    }
}

/// A loaded library, or the loader's error.
fn open(path: &[u8]) -> Result<*mut c_void, &'static [u8]> {
    let mut c = [0u8; 4096];
    if path.len() >= c.len() || path.contains(&0) {
        return Err(b"path too long");
    }
    c[..path.len()].copy_from_slice(path);
    // SAFETY: a NUL-terminated path.
    let h = unsafe { cdt_dlopen(c.as_ptr().cast(), RTLD_NOW | RTLD_LOCAL) };
    if !h.is_null() {
        return Ok(h);
    }
    // SAFETY: NULL or a NUL-terminated string, valid until the next dl*
    // call of this thread; this program makes none before it is written
    // (`run` writes the answer that borrows it before the next ask).
    let e = unsafe { cdt_dlerror() };
    if e.is_null() {
        Err(b"unknown error")
    } else {
        Err(unsafe { CStr::from_ptr(e) }.to_bytes())
    }
}

/// `dlsym(h, name)`: `name` without its NUL; None when absent.
fn sym(h: *mut c_void, name: &[u8]) -> Option<*mut c_void> {
    let mut c = [0u8; 256];
    if name.len() >= c.len() || name.contains(&0) {
        return None;
    }
    c[..name.len()].copy_from_slice(name);
    // SAFETY: a handle from dlopen and a NUL-terminated name.
    let p = unsafe { cdt_dlsym(h, c.as_ptr().cast()) };
    (!p.is_null()).then_some(p)
}

/// Calls `size_t name(void)` in `h`.
fn call_size(h: *mut c_void, name: &[u8]) -> Option<i64> {
    let p = sym(h, name)?;
    // SAFETY: cuDNN declares these `size_t f(void)` (cudnn_graph.h,
    // cudnn_ops_infer.h).
    let f: unsafe extern "C" fn() -> usize = unsafe { core::mem::transmute(p) };
    Some(unsafe { f() } as i64)
}

/// The core library's answer, and whether it loaded.
fn core(path: &[u8]) -> (Answer<'static>, bool) {
    let h = match open(path) {
        Ok(h) => h,
        Err(e) => return (Answer::failed(&[e]), false),
    };
    let mut a = Answer {
        version: call_size(h, b"cudnnGetVersion"),
        cudart: call_size(h, b"cudnnGetCudartVersion"),
        max_device: call_size(h, b"cudnnGetMaxDeviceVersion"),
        ..Answer::default()
    };
    if a.version.is_none() {
        a.error = Answer::missing(b"cudnnGetVersion").error;
    }
    (a, true)
}

fn check<'a>(path: &[u8], function: &'a [u8]) -> Answer<'a> {
    let h = match open(path) {
        Ok(h) => h,
        Err(e) => return Answer::failed(&[e]),
    };
    let Some(p) = sym(h, function) else {
        return Answer::missing(function);
    };
    // SAFETY: `cudnnStatus_t f(void)`; cudnnStatus_t is an int-sized enum.
    let f: unsafe extern "C" fn() -> c_int = unsafe { core::mem::transmute(p) };
    Answer {
        status: Some(i64::from(unsafe { f() })),
        ..Answer::default()
    }
}

/// Calls `int function(int *)` (`cudaRuntimeGetVersion`,
/// `cuDriverGetVersion`): the status, and the version when it succeeded.
fn int_out(path: &[u8], function: &'static [u8]) -> Answer<'static> {
    let h = match open(path) {
        Ok(h) => h,
        Err(e) => return Answer::failed(&[e]),
    };
    let Some(p) = sym(h, function) else {
        return Answer::missing(function);
    };
    // SAFETY: both are declared `cudaError_t/CUresult f(int *)`: an
    // int-sized enum and a pointer to an int of ours.
    let f: unsafe extern "C" fn(*mut c_int) -> c_int = unsafe { core::mem::transmute(p) };
    let mut v: c_int = 0;
    let status = unsafe { f(&mut v) };
    Answer {
        status: Some(i64::from(status)),
        version: (status == 0).then_some(i64::from(v)),
        ..Answer::default()
    }
}

/// The result, written through a buffer to descriptor `fd`.
struct Out {
    fd: c_int,
    buf: [u8; 4096],
    len: usize,
    ok: bool,
}

impl Out {
    fn new(fd: c_int) -> Out {
        Out {
            fd,
            buf: [0; 4096],
            len: 0,
            ok: true,
        }
    }

    fn put(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.len == self.buf.len() {
                self.flush();
            }
            self.buf[self.len] = b;
            self.len += 1;
        }
    }

    /// The inside of a JSON string. Bytes from 0x80 up go as they are: the
    /// reader takes the output as UTF-8, replacing what is not.
    fn string(&mut self, s: &[u8]) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        for &c in s {
            match c {
                b'"' => self.put(b"\\\""),
                b'\\' => self.put(b"\\\\"),
                0..=0x1f | 0x7f => {
                    self.put(b"\\u00");
                    self.put(&[HEX[usize::from(c >> 4)], HEX[usize::from(c & 15)]]);
                }
                _ => self.put(&[c]),
            }
        }
    }

    fn int(&mut self, v: i64) {
        let mut digits = [0u8; 20];
        let mut n = v.unsigned_abs();
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        if v < 0 {
            self.put(b"-");
        }
        self.put(&digits[at..]);
    }

    /// Writes what is buffered; false once a write has failed.
    fn flush(&mut self) -> bool {
        self.ok &= say(self.fd, &self.buf[..self.len]);
        self.len = 0;
        self.ok
    }
}

/// Writes all of `bytes` to `fd`; false when it could not.
fn say(fd: c_int, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        // SAFETY: a valid buffer and its length.
        let n = unsafe { write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            // EINTR: no handler is installed here, so only a stop and
            // continue could interrupt; write again then.
            if n < 0 && errno_is_eintr() {
                continue;
            }
            return false;
        }
        bytes = &bytes[n as usize..];
    }
    true
}

fn errno_is_eintr() -> bool {
    extern "C" {
        fn __errno_location() -> *mut c_int;
    }
    // SAFETY: glibc's thread-local errno.
    unsafe { *__errno_location() == 4 }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    // No code path panics (the preload helper's rule); were one to, the
    // probe fails visibly and the launcher reports no result.
    unsafe { _exit(101) }
}
