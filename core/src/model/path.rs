//! Path and library-name pieces, as the trace's paths are written (text,
//! not resolved against any file system).
//!
//! A path from a trace is a `String` whose bytes that are not UTF-8 are
//! characters of `cudnn_trace_format::escape::RAW_BYTE_BASE` (the trace's
//! `\udcNN`): [`fs_path`] turns it into the file system's path, byte for
//! byte, and [`from_os`] does the opposite.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

/// The file system path a trace path stands for.
pub fn fs_path(p: &str) -> PathBuf {
    PathBuf::from(OsString::from_vec(cudnn_trace_format::escape::to_bytes(p)))
}

/// A file system name or path as trace text (lossless).
pub fn from_os(p: &OsStr) -> String {
    cudnn_trace_format::escape::from_bytes(p.as_bytes())
}

/// The last component of a path (`a/b/` gives `b`).
pub fn basename(p: &str) -> &str {
    let t = p.trim_end_matches('/');
    t.rsplit('/').next().unwrap_or(t)
}

/// The directory part of a path: `/` for `/x`, empty without a `/`.
pub fn dirname(p: &str) -> &str {
    match p.rfind('/') {
        Some(0) => "/",
        Some(i) => &p[..i],
        None => "",
    }
}

/// The stem of a library name: `libcudnn_graph.so.9.1.0` → `libcudnn_graph`.
pub fn stem(name: &str) -> &str {
    let base = name.rsplit('/').next().unwrap_or(name);
    // A byte loop, not `str::find`: the rules compare the stems of whole
    // directories (a system library directory holds a thousand names), and
    // `find` sets up a two-way searcher for each (issue 10: 2.9 M
    // instructions of one report, a tenth of that now).
    match base.as_bytes().windows(3).position(|w| w == b".so") {
        Some(i) => &base[..i],
        None => base,
    }
}
