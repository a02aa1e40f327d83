//! Which CUDA library an object is, by identity rather than file name alone
//! (issue 14).
//!
//! Packaging renames copies: auditwheel's `libcudart-8a3b2c1d.so.12`, a
//! vendored `_cudart.so` that keeps the SONAME `libcudart.so.12`, a renamed
//! copy whose SONAME was patched too. And stubs look like the real thing:
//! the toolkit's `lib64/stubs/libcuda.so` (for linking; every call returns
//! CUDA_ERROR_STUB_LIBRARY), a `libcudart_stub.so`. So an object's family
//! comes, in this order, from
//! 1. its file name (`cudnn_trace_format::cuda_family`, as before);
//! 2. its SONAME;
//! 3. what it defines: `cudnnGetVersion` (cuDNN's dispatcher and core
//!    library), `cudaRuntimeGetVersion` (a runtime), `cuInit` (a driver).
//!
//! Everything is read in place from the object's dynamic section and symbol
//! table (`cdtrace_abi::elf`): no system call. Step 3 runs only for objects
//! whose name and SONAME say nothing, costs a few hash-table bloom-filter
//! probes, and is skipped for the main program, ld.so and the vDSO.
//!
//! A stub is an object of a family whose path has a `stubs` directory or
//! whose file name has `_stub` in it: it gets `stub: true` in its `load`
//! event and never counts as a copy of the library it stands in for.

use crate::sys::{LinkMap, DT_SONAME};
use cudnn_trace_format::{basename, cuda_family};

/// An object's family and how it was known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Identity {
    pub family: Option<&'static str>,
    /// [`BY_NAME`], [`BY_SONAME`] or [`BY_SYMBOL`] (null with no family).
    pub by: Option<&'static str>,
    pub stub: bool,
}

pub const BY_NAME: &str = "name";
pub const BY_SONAME: &str = "soname";
pub const BY_SYMBOL: &str = "symbol";

/// (symbol, family) for step 3.
const DEFINES: &[(&[u8], &str)] = &[
    (b"cudnnGetVersion", "cudnn"),
    (b"cudaRuntimeGetVersion", "cudart"),
    (b"cuInit", "cuda"),
];

/// The identity of object `map`, mapped from `path`. `symbols`: whether
/// step 3 may run (not for the main program, ld.so, the vDSO).
///
/// # Safety
/// `map` is a live link map the loader has mapped (`la_objopen` or later).
pub unsafe fn identify(map: *const LinkMap, path: &[u8], symbols: bool) -> Identity {
    let found = |family, by| Identity {
        family: Some(family),
        by: Some(by),
        stub: is_stub_path(path),
    };
    if let Some(f) = cuda_family(path) {
        return found(f, BY_NAME);
    }
    if let Some(f) = crate::elf::dyn_string(map, DT_SONAME).and_then(cuda_family) {
        return found(f, BY_SONAME);
    }
    if symbols {
        // One reading of the dynamic section for the three names.
        if let Some(table) = cdtrace_abi::elf::Symbols::of(map) {
            for (sym, f) in DEFINES {
                if table.find(sym, cdtrace_abi::elf::STT_FUNC).is_some() {
                    return found(f, BY_SYMBOL);
                }
            }
        }
    }
    Identity {
        family: None,
        by: None,
        stub: false,
    }
}

/// A stub's path: a `stubs` directory in it, or `_stub` in the file name.
pub fn is_stub_path(path: &[u8]) -> bool {
    let base = basename(path);
    let has = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
    has(base, b"_stub") || path.split(|&c| c == b'/').any(|c| c == b"stubs")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stubs() {
        assert!(is_stub_path(b"/usr/local/cuda/lib64/stubs/libcuda.so"));
        assert!(is_stub_path(b"/x/libcudart_stub.so"));
        assert!(!is_stub_path(b"/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
        assert!(!is_stub_path(b"/opt/stubsdir/libcuda.so.1"));
    }
}
