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

/// The stem of a library name: `libcudnn_graph.so.9.1.0` → `libcudnn_graph`
/// (of a path: of its last component).
pub fn stem(name: &str) -> &str {
    // Byte loops, not `rsplit` and `str::find`: the rules compare the stems
    // of whole directories (a system library directory holds a thousand
    // names), and those set up a searcher for each name (issue 10: 2.9 M
    // instructions of one report).
    let bytes = name.as_bytes();
    let base = match bytes.iter().rposition(|&b| b == b'/') {
        Some(i) => &name[i + 1..],
        None => name,
    };
    match base.as_bytes().windows(3).position(|w| w == b".so") {
        Some(i) => &base[..i],
        None => base,
    }
}

#[cfg(test)]
mod tests {
    use super::stem;

    #[test]
    fn stems() {
        assert_eq!(stem("/a/b/libcudnn_graph.so.9.1.0"), "libcudnn_graph");
        assert_eq!(stem("libcudnn.so"), "libcudnn");
        assert_eq!(stem("libfoo"), "libfoo");
        assert_eq!(stem("/x.so.1/libbar.a"), "libbar.a");
        assert_eq!(stem("dir/"), "");
        assert_eq!(stem("/é/libü.so.2"), "libü");
    }
}
