//! Path and library-name pieces, as the trace's paths are written (text,
//! not resolved against any file system).

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
    match base.find(".so") {
        Some(i) => &base[..i],
        None => base,
    }
}
