//! The cudnn-trace event format.
//!
//! A trace directory holds one JSON Lines file per traced process image
//! (`<pid>.jsonl`, or `<pid>.<n>.jsonl` after an `exec` or a pid reuse).
//! The first line of each file is a [`ev::PROCESS`] header carrying
//! [`SCHEMA_VERSION`]; every later line is one event. The full schema is
//! documented in `docs/trace-format.md`; this crate is the single source of
//! the names both sides use.
//!
//! The writer half ([`json`]) has no dependencies and never panics, so the
//! shim can use it inside other people's processes. The reader half
//! ([`read`], feature `read`) is for the CLI.

#![forbid(unsafe_code)]

pub mod escape;
pub mod json;
#[cfg(feature = "read")]
pub mod read;

/// Version of the on-disk schema, written in every process header as `v`.
/// Bump it when a field changes meaning or an event kind is removed; adding a
/// field or an event kind is compatible (readers skip what they don't know).
pub const SCHEMA_VERSION: u32 = 1;

/// Environment variable names shared by the launcher and the shim.
pub mod envvar {
    /// Directory where the shim writes its per-process trace files.
    pub const OUT_DIR: &str = "CUDNN_TRACE_DIR";
    /// `cuda` (default) keeps the full record for CUDA-family libraries only;
    /// `all` keeps it for every library.
    pub const MODE: &str = "CUDNN_TRACE_MODE";
    /// Path of the shim itself, so that children and diagnostics can name it.
    pub const SHIM: &str = "CUDNN_TRACE_SHIM";
    /// Set to `0` to make an inherited shim inert without editing LD_PRELOAD.
    pub const ENABLE: &str = "CUDNN_TRACE";
    /// Directory every cuDNN library must come from (`docs/pin.md`).
    pub const PIN: &str = "CUDNN_TRACE_PIN";
    /// Set to `0` to record no calls and ask no library for its version
    /// (`docs/versions-and-calls.md`); loads are still traced.
    pub const CALLS: &str = "CUDNN_TRACE_CALLS";
    /// `strict` (default: a cuDNN library missing from the pin directory
    /// fails to load) or `warn` (the normal search runs and is recorded).
    pub const PIN_MODE: &str = "CUDNN_TRACE_PIN_MODE";
    /// `panic`: the shim panics once, in its first `la_objopen`, to show
    /// that a bug in it costs a trace event and never the program (the
    /// test suite's check of the shim's unwinder, on any machine).
    pub const SELF_TEST: &str = "CUDNN_TRACE_SELF_TEST";
}

/// The pin's vocabulary (`pin` events, `docs/pin.md`).
pub mod pin {
    pub const STRICT: &str = "strict";
    pub const WARN: &str = "warn";
    /// `action`: the request now names a file in the pin directory.
    pub const REROUTED: &str = "rerouted";
    /// `action`: strict mode, the pin directory has no such library; the
    /// request names a path in it that does not exist, so it fails.
    pub const BLOCKED: &str = "blocked";
    /// `action`: warn mode, no such library in the pin directory; the
    /// normal search runs.
    pub const UNPINNED: &str = "unpinned";
    /// `rule`: the pin directory holds a file of the requested name.
    pub const SAME_NAME: &str = "same-name";
    /// `rule`: it holds the library's SONAME file of the requested major.
    pub const SAME_MAJOR: &str = "same-major";
    /// `rule`: neither.
    pub const NOT_IN_PIN_DIR: &str = "not-in-pin-dir";
}

/// Event kinds (the `ev` field).
pub mod ev {
    /// First line of every file: who the process is.
    pub const PROCESS: &str = "process";
    /// A library entered the process (or a request was served by one
    /// already there: `new` is false).
    pub const LOAD: &str = "load";
    /// A load request failed.
    pub const LOAD_FAILED: &str = "load_failed";
    /// A library left the process (`dlclose` took its last reference).
    pub const UNLOAD: &str = "unload";
    /// The program read the loader's error text for an earlier failed request.
    pub const DLERROR: &str = "dlerror";
    /// Something the shim wants the user to know (bad configuration, …).
    pub const NOTE: &str = "note";
    /// The pin decided where a requested cuDNN library comes from.
    pub const PIN: &str = "pin";
    /// What a CUDA-family library says about its own version
    /// (`docs/versions-and-calls.md`).
    pub const VERSION: &str = "version";
    /// One of the first calls of the program to a tracked cuDNN / CUDA
    /// function, per function and serving library.
    pub const CALL: &str = "call";
    /// How many times each tracked function of each library was called, for
    /// those called more often than the recorded first few times.
    pub const CALL_COUNTS: &str = "call_counts";
    /// An object obtained the CUDA driver's entry-point resolver
    /// (`cuGetProcAddress[_v2]`): a CUDA runtime, shared (`libcudart`) or
    /// linked statically into that object.
    pub const DRIVER_CLIENT: &str = "driver_client";
}

/// Where a `version` event's version comes from (its `source` field).
pub mod version_source {
    /// The shim called the library's own version function.
    pub const QUERY: &str = "query";
    /// The version in the (resolved) file name, `libcudnn_graph.so.9.14.0`.
    pub const FILE_NAME: &str = "file-name";
    /// The SONAME's version (for cuDNN and cudart the major only, which the
    /// symbol version tags repeat): `libcudnn_graph.so.9` gives `9`.
    pub const ELF: &str = "elf";
}

/// How the program got the function it called (the `via` field of `call`).
pub mod call_via {
    /// A PLT/GOT entry bound by the loader (an object linked against the library).
    pub const PLT: &str = "plt";
    /// `dlsym`/`dlvsym` on any handle.
    pub const DLSYM: &str = "dlsym";
    /// A pointer handed out by `cuGetProcAddress` / `cuGetProcAddress_v2`.
    pub const CU_GET_PROC_ADDRESS: &str = "cuGetProcAddress";
}

/// When a `call_counts` event was written (its `at` field).
pub mod counts_at {
    /// The process is exiting (`exit`, or `main` returned).
    pub const EXIT: &str = "exit";
    /// The library (`lib`) left the process (`dlclose`).
    pub const UNLOAD: &str = "unload";
}

/// How many calls per function and serving library are written as `call`
/// events; later calls are only counted (`call_counts`).
pub const CALLS_RECORDED: u64 = 4;

/// Why the loader picked a path (the `reason` field of a load event).
pub mod reason {
    /// The request named a path (contained a `/`), possibly after `$ORIGIN` expansion.
    pub const PATH: &str = "path";
    /// Served by an object already in the namespace (name or SONAME match).
    pub const ALREADY_LOADED: &str = "already-loaded";
    /// The candidate was a different path to a file that was already mapped
    /// (same device and inode), so the loader reused that object.
    pub const SAME_FILE: &str = "same-file";
    pub const LD_LIBRARY_PATH: &str = "LD_LIBRARY_PATH";
    /// DT_RPATH of `reason_owner` (the requester, one of its loaders, or the executable).
    pub const RPATH: &str = "RPATH";
    /// DT_RUNPATH of `reason_owner` (always the requester itself).
    pub const RUNPATH: &str = "RUNPATH";
    /// An RPATH/RUNPATH directory the shim could not attribute to one object.
    pub const RPATH_OR_RUNPATH: &str = "RPATH/RUNPATH";
    pub const LD_SO_CACHE: &str = "ld.so.cache";
    pub const DEFAULT_DIR: &str = "default-dir";
    /// A trusted directory searched in secure-execution mode.
    pub const SECURE_DIR: &str = "secure-dir";
    pub const MAIN_PROGRAM: &str = "main-program";
    pub const DYNAMIC_LINKER: &str = "dynamic-linker";
    pub const VDSO: &str = "vdso";
    /// The pin rerouted the request into the pin directory (`search_dir`).
    pub const PIN: &str = "pin";
    pub const UNKNOWN: &str = "unknown";
}

/// How the request reached the loader (the `via` field).
pub mod via {
    pub const DLOPEN: &str = "dlopen";
    pub const DLMOPEN: &str = "dlmopen";
    /// A DT_NEEDED entry of `requester`, at start-up or inside a dlopen.
    pub const NEEDED: &str = "needed";
    /// LD_PRELOAD / --preload.
    pub const PRELOAD: &str = "preload";
    /// Loaded by the kernel or the dynamic linker itself (main program, ld.so, vdso).
    pub const STARTUP: &str = "startup";
    /// A loader request whose origin the shim could not see (for instance a
    /// `dlopen` from an `RTLD_DEEPBIND` library, which bypasses the hook).
    pub const LOADER: &str = "loader";
}

/// Outcome of one candidate path the loader tried (`tried[].result`).
pub mod tried {
    /// No file at that path.
    pub const MISSING: &str = "missing";
    /// A file exists there but the loader passed over it (wrong ELF class or
    /// machine, unreadable, not a shared object, …).
    pub const REJECTED: &str = "rejected";
    /// The loader took this candidate.
    pub const USED: &str = "used";
}

/// Environment variables copied into the process header when set: the ones
/// that change what gets loaded, and the rank variables that tell which
/// worker of a distributed job a process is.
pub const HEADER_ENV: &[&str] = &[
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "LD_AUDIT",
    "LD_BIND_NOW",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_HOME",
    "CUDA_PATH",
    "CONDA_PREFIX",
    "VIRTUAL_ENV",
    "XLA_FLAGS",
    "TF_CPP_MIN_LOG_LEVEL",
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "SLURM_PROCID",
    "SLURM_LOCALID",
    "SLURM_JOB_ID",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "MV2_COMM_WORLD_RANK",
    "JAX_PROCESS_ID",
];

/// CUDA-family library stems: a library whose file name starts with
/// `<stem>.so` or `<stem>_`… gets the full record by default.
/// Each entry is (prefix of the file name, family name used in reports).
/// Order matters: longer prefixes that share a start come first.
pub const CUDA_FAMILY: &[(&str, &str)] = &[
    ("libcudnn", "cudnn"),
    ("libcudart", "cudart"),
    ("libcuda.so", "cuda"),
    ("libcublasLt", "cublasLt"),
    ("libcublas", "cublas"),
    ("libnvrtc", "nvrtc"),
    ("libnvJitLink", "nvJitLink"),
    ("libcufft", "cufft"),
    ("libcurand", "curand"),
    ("libcusparse", "cusparse"),
    ("libcusolver", "cusolver"),
    ("libnccl", "nccl"),
];

/// What every [`CUDA_FAMILY`] prefix starts with.
const FAMILY_STARTS: [&[u8]; 3] = [b"libcu", b"libnv", b"libnc"];

/// The part of a path after its last `/` (all of it when it has none).
pub fn basename(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&c| c == b'/') {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

/// The CUDA family a file name (or path) belongs to, if any.
///
/// `libcudnn_graph.so.9` → `cudnn`; `libcuda.so.1` → `cuda`;
/// `libcudart_static.a` → none (not a shared object name).
pub fn cuda_family(name: &[u8]) -> Option<&'static str> {
    let base = basename(name);
    // Every prefix of the table starts with one of these (a test holds it
    // to that): the shim asks this of every name the loader searches and
    // every object it maps, and most are rejected here.
    if !FAMILY_STARTS.iter().any(|p| base.starts_with(p)) || !contains(base, b".so") {
        return None;
    }
    CUDA_FAMILY
        .iter()
        .find(|(prefix, _)| base.starts_with(prefix.as_bytes()))
        .map(|&(_, fam)| fam)
}

/// A cuDNN library file name, split: `libcudnn_graph.so.9.19.0` gives stem
/// `libcudnn_graph` and version `[9, 19, 0]`. Accepts `libcudnn.so` and
/// `libcudnn_<word>.so`, each optionally followed by `.<digits>` groups;
/// takes a path (only the part after the last `/` counts).
pub fn cudnn_name(name: &[u8]) -> Option<(&[u8], Vec<u32>)> {
    let (stem, rest) = split_so(basename(name))?;
    let word_ok =
        |w: &[u8]| !w.is_empty() && w.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_');
    // The stem first: this runs for every name the loader searches under a
    // pin, and most are not cuDNN's.
    match stem.strip_prefix(b"libcudnn") {
        Some([]) => {}
        Some([b'_', word @ ..]) if word_ok(word) => {}
        _ => return None,
    }
    Some((stem, so_numbers(rest)?))
}

/// The version numbers after `.so` in a library file name (or path):
/// `libcudart.so.13.0.96` gives `[13, 0, 96]`, `libcuda.so` gives `[]`;
/// `None` without `.so`, or when what follows it is not `.<digits>` groups.
pub fn so_version(name: &[u8]) -> Option<Vec<u32>> {
    so_numbers(split_so(basename(name))?.1)
}

/// `bytes` as lowercase hex: a build-id as the trace and the report write it.
/// (One table lookup per digit: a `format!` per byte cost the launcher a
/// tenth of its instructions, issue 10.)
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// Whether a glibc version string (`gnu_get_libc_version()`: "2.36",
/// "2.17") is `want` (major, minor) or later; false when it does not parse.
/// The shim and the launcher both decide by it what the running glibc
/// allows.
pub fn glibc_at_least(version: &[u8], want: (u32, u32)) -> bool {
    let mut parts = version.split(|&c| c == b'.').map(|p| {
        core::str::from_utf8(p)
            .ok()
            .and_then(|s| s.parse::<u32>().ok())
    });
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= want,
        _ => false,
    }
}

/// A file name split at its first `.so`: the stem, and what follows `.so`.
fn split_so(base: &[u8]) -> Option<(&[u8], &[u8])> {
    let so = base.windows(3).position(|w| w == b".so")?;
    Some((&base[..so], &base[so + 3..]))
}

/// `.9.19.0` gives `[9, 19, 0]`, the empty string `[]`.
fn so_numbers(rest: &[u8]) -> Option<Vec<u32>> {
    let mut version = Vec::new();
    if !rest.is_empty() {
        for part in rest.strip_prefix(b".")?.split(|&c| c == b'.') {
            if part.is_empty() || part.len() > 9 || !part.iter().all(u8::is_ascii_digit) {
                return None;
            }
            version.push(part.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0')));
        }
    }
    Some(version)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lowercase_two_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(hex(&[]), "");
    }

    #[test]
    fn every_family_prefix_passes_the_quick_reject() {
        for (prefix, fam) in CUDA_FAMILY {
            let p = prefix.as_bytes();
            assert!(FAMILY_STARTS.iter().any(|s| p.starts_with(s)), "{prefix}");
            let name = format!("/x/{}.so.1", prefix.trim_end_matches(".so"));
            assert_eq!(cuda_family(name.as_bytes()), Some(*fam), "{name}");
        }
        assert_eq!(cuda_family(b"/usr/lib/libc.so.6"), None);
        assert_eq!(cuda_family(b"libcu"), None);
    }

    #[test]
    fn family_of_names_and_paths() {
        assert_eq!(cuda_family(b"libcudnn_graph.so.9"), Some("cudnn"));
        assert_eq!(cuda_family(b"/x/y/libcudnn.so.9.19.0"), Some("cudnn"));
        assert_eq!(cuda_family(b"libcuda.so.1"), Some("cuda"));
        assert_eq!(cuda_family(b"libcudart.so.13"), Some("cudart"));
        assert_eq!(cuda_family(b"libcublasLt.so.13"), Some("cublasLt"));
        assert_eq!(cuda_family(b"libcublas.so.13"), Some("cublas"));
        assert_eq!(cuda_family(b"libnccl.so.2"), Some("nccl"));
        assert_eq!(cuda_family(b"libnvJitLink.so.13"), Some("nvJitLink"));
        // Not CUDA: look-alikes and non-shared-object names.
        assert_eq!(cuda_family(b"libcudart_static.a"), None);
        assert_eq!(cuda_family(b"libc.so.6"), None);
        assert_eq!(cuda_family(b"/opt/libcudnn/libfoo.so"), None);
        assert_eq!(cuda_family(b"libcudatrace.so"), None);
    }

    #[test]
    fn cudnn_names() {
        let n =
            |s: &[u8]| cudnn_name(s).map(|(st, v)| (String::from_utf8_lossy(st).into_owned(), v));
        assert_eq!(n(b"libcudnn.so.9"), Some(("libcudnn".into(), vec![9])));
        assert_eq!(n(b"libcudnn.so"), Some(("libcudnn".into(), vec![])));
        assert_eq!(
            n(b"/a/b/libcudnn_graph.so.9.19.0"),
            Some(("libcudnn_graph".into(), vec![9, 19, 0]))
        );
        assert_eq!(
            n(b"libcudnn_ops_infer.so.8"),
            Some(("libcudnn_ops_infer".into(), vec![8]))
        );
        for bad in [
            &b"libcudnn.so.9.x"[..],
            b"libcudnnfoo.so.9",
            b"libcudnn_.so.9",
            b"libcudnn.so.",
            b"libcudnn.so.9..1",
            b"libcudnn_static.a",
            b"libcudnn.so9",
            b"/lib/libcudnn.so.9/libc.so.6",
            b"libcudnn-x.so",
        ] {
            assert_eq!(cudnn_name(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn glibc_versions_compare_by_number() {
        assert!(glibc_at_least(b"2.36", (2, 24)));
        assert!(glibc_at_least(b"2.24", (2, 24)));
        assert!(!glibc_at_least(b"2.23", (2, 24)));
        assert!(!glibc_at_least(b"2.17", (2, 24)));
        assert!(glibc_at_least(b"3.0", (2, 24)));
        assert!(glibc_at_least(b"2.34", (2, 34)));
        assert!(!glibc_at_least(b"", (2, 24)));
        assert!(!glibc_at_least(b"2", (2, 24)));
    }

    #[test]
    fn so_versions_and_basenames() {
        assert_eq!(
            so_version(b"/x/libcudart.so.13.0.96"),
            Some(vec![13, 0, 96])
        );
        assert_eq!(so_version(b"libcuda.so.1"), Some(vec![1]));
        assert_eq!(so_version(b"libcuda.so"), Some(vec![]));
        assert_eq!(so_version(b"libcudart.so.13.x"), None);
        assert_eq!(so_version(b"libcudart_static.a"), None);
        assert_eq!(basename(b"/a/b/libc.so.6"), b"libc.so.6");
        assert_eq!(basename(b"libc.so.6"), b"libc.so.6");
        assert_eq!(basename(b"/a/b/"), b"");
    }
}
