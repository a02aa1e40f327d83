//! Failed loads as the summary shows them: cuDNN 9's name-variant misses
//! folded into the library that was found, identical failures grouped, the
//! candidates tried compacted, and the failures the pin caused on purpose.

use super::libraries::LibraryView;
use crate::model::{basename, dirname, Failed, Image};
use cudnn_trace_format::reason;
use std::collections::hash_map::Entry;
use std::collections::HashMap;

/// One candidate of a failed request, as the text summary shows it.
#[derive(Debug, PartialEq, Eq)]
pub struct TriedRow {
    pub path: String,
    pub reason: String,
    pub result: String,
    /// Platform subdirectories of this directory tried just before it with
    /// the same outcome.
    pub folded: usize,
}

/// The tried candidates for the text summary: repeats removed, and the
/// platform subdirectories the loader tries below a search directory
/// (`glibc-hwcaps/x86-64-v3/`, `tls/`, `x86_64/`, …) folded into the entry
/// of that directory when they share its reason and result. The JSON
/// document keeps every candidate.
pub fn compact_tried(tried: &[cudnn_trace_format::read::Tried]) -> Vec<TriedRow> {
    // Directories glibc tries below each search directory.
    const PLATFORM: &[&str] = &[
        "glibc-hwcaps",
        "tls",
        "x86_64",
        "haswell",
        "xeon_phi",
        "avx512_1",
        "i386",
        "i486",
        "i586",
        "i686",
        "sse2",
        "aarch64",
        "atomics",
        "power8",
        "power9",
        "power10",
        "z13",
        "z14",
        "z15",
        "z16",
    ];
    let mut rows: Vec<TriedRow> = Vec::new();
    for t in tried {
        if rows
            .iter()
            .any(|u| u.path == t.path && u.reason == t.reason && u.result == t.result)
        {
            continue;
        }
        // The loader tries a directory's platform subdirectories right
        // before the directory itself: fold the run just before it.
        let dir = dirname(&t.path).trim_end_matches('/').to_string() + "/";
        let mut folded = 0;
        while let Some(u) = rows.last() {
            let sub = dirname(&u.path)
                .strip_prefix(dir.as_str())
                .map(|r| r.split('/').next().unwrap_or(""));
            let platform = sub.is_some_and(|c| PLATFORM.contains(&c));
            if platform
                && u.reason == t.reason
                && u.result == t.result
                && basename(&u.path) == basename(&t.path)
            {
                folded += 1 + u.folded;
                rows.pop();
            } else {
                break;
            }
        }
        rows.push(TriedRow {
            path: t.path.clone(),
            reason: t.reason.clone(),
            result: t.result.clone(),
            folded,
        });
    }
    rows
}

/// `libcudnn_graph.so.9.19.0` → `libcudnn_graph.so`: a file name up to its `.so`.
pub fn so_stem(name: &str) -> Option<&str> {
    let b = basename(name);
    b.find(".so").map(|i| &b[..i + 3])
}

/// A failed request for a name of which the same requester got another
/// variant. cuDNN 9 asks for `X.so.9.19.0`, then
/// `X.so.9.19`, then `X.so.9`; with pip wheels only the last exists. Those
/// misses are its search order, not failures, and are folded into the row of
/// the library that was found (`after … not found`). One question;
/// [`Variants`] answers it for every failure of an image at once.
pub fn superseded(img: &Image, f: &Failed) -> bool {
    Variants::new(img).superseded(f)
}

/// The names each requester got loaded, by `.so` stem, and the variants
/// that failed before them: [`superseded`] and [`variants_missed`] for a
/// whole image in one pass over its loads and one over its failures
/// (asking per failure and per library made the summary quadratic).
pub struct Variants<'a> {
    /// (requester, namespace, stem) → the names loaded.
    loaded: HashMap<(Option<&'a str>, i64, &'a str), Vec<&'a str>>,
    /// (requester, stem) → the superseded names that failed, first-seen order.
    missed: HashMap<(Option<&'a str>, &'a str), Vec<&'a str>>,
}

impl<'a> Variants<'a> {
    pub fn new(img: &'a Image) -> Self {
        let mut v = Variants {
            loaded: HashMap::new(),
            missed: HashMap::new(),
        };
        for l in &img.loads {
            let Some(name) = l.name.as_deref() else {
                continue;
            };
            if let Some(stem) = so_stem(name) {
                let names = v
                    .loaded
                    .entry((l.requester.as_deref(), l.lmid, stem))
                    .or_default();
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        for f in &img.failed {
            if let Some(stem) = so_stem(&f.ev.name).filter(|_| v.superseded(f)) {
                let names = v
                    .missed
                    .entry((f.ev.requester.as_deref(), stem))
                    .or_default();
                if !names.contains(&f.ev.name.as_str()) {
                    names.push(&f.ev.name);
                }
            }
        }
        v
    }

    /// [`superseded`].
    pub fn superseded(&self, f: &Failed) -> bool {
        let Some(stem) = so_stem(&f.ev.name) else {
            return false;
        };
        // Any time, not only after: the shim records a repeated request
        // served by an already-loaded object once, so later rounds of the
        // same search order have no load event of their own. Another
        // variant: the same name mapped and then rolled back (a missing
        // dependency) is this failure, not a success.
        self.loaded
            .get(&(f.ev.requester.as_deref(), f.ev.lmid, stem))
            .is_some_and(|names| names.iter().any(|n| *n != f.ev.name))
    }

    /// The variant names that failed before `v` was found, for its row.
    pub fn missed(&self, v: &LibraryView) -> Vec<String> {
        let Some(stem) = v.name.as_deref().and_then(so_stem) else {
            return Vec::new();
        };
        self.missed
            .get(&(v.requester.as_deref(), stem))
            .map(|names| names.iter().map(|n| n.to_string()).collect())
            .unwrap_or_default()
    }
}

/// The variant names that failed before `v` was found, for its row.
pub fn variants_missed(img: &Image, v: &LibraryView) -> Vec<String> {
    Variants::new(img).missed(v)
}

/// What makes two failures the same in the summary: every fact but when.
type FailureKey<'a> = (
    &'a str,
    Option<&'a str>,
    &'a str,
    i64,
    Option<&'a str>,
    Vec<(&'a str, &'a str, &'a str)>,
    Vec<&'a str>,
);

fn failure_key(f: &Failed) -> FailureKey<'_> {
    let e = &f.ev;
    (
        &e.name,
        e.requester.as_deref(),
        &e.via,
        e.lmid,
        e.family.as_deref(),
        e.tried
            .iter()
            .map(|t| (t.path.as_str(), t.reason.as_str(), t.result.as_str()))
            .collect(),
        f.errors(),
    )
}

/// Failures of an image, identical ones grouped (with their count), without
/// the [`superseded`] ones: failed requests with identical facts (cuDNN
/// probes the same names again and again), each with how often it
/// happened (repeats the reader folded included), in first-seen order.
pub fn grouped_failures(img: &Image) -> Vec<(&Failed, u64)> {
    grouped_failures_with(img, &Variants::new(img))
}

/// [`grouped_failures`] with the image's [`Variants`] already built.
pub fn grouped_failures_with<'a>(
    img: &'a Image,
    variants: &Variants<'_>,
) -> Vec<(&'a Failed, u64)> {
    let mut groups: Vec<(&Failed, u64)> = Vec::new();
    let mut index: HashMap<FailureKey<'_>, usize> = HashMap::new();
    for f in img.failed.iter().filter(|f| !variants.superseded(f)) {
        match index.entry(failure_key(f)) {
            Entry::Occupied(e) => groups[*e.get()].1 += f.count,
            Entry::Vacant(e) => {
                e.insert(groups.len());
                groups.push((f, f.count));
            }
        }
    }
    groups
}

/// A failure the pin caused on purpose: its only candidate is the path in
/// the pin directory that does not exist.
pub fn blocked_by_pin(f: &Failed) -> bool {
    f.ev.tried.len() == 1 && f.ev.tried[0].reason == reason::PIN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tried_platform_subdirectories_are_folded() {
        use cudnn_trace_format::read::Tried;
        let t = |p: &str, r: &str| Tried {
            path: p.into(),
            reason: r.into(),
            result: "missing".into(),
        };
        let tried = vec![
            t("/a/b/glibc-hwcaps/x86-64-v3/libx.so.1", "LD_LIBRARY_PATH"),
            t("/a/b/tls/x86_64/x86_64/libx.so.1", "LD_LIBRARY_PATH"),
            t("/a/b/tls/x86_64/libx.so.1", "LD_LIBRARY_PATH"),
            t("/a/b/tls/x86_64/libx.so.1", "LD_LIBRARY_PATH"),
            t("/a/b/tls/libx.so.1", "LD_LIBRARY_PATH"),
            t("/a/b/libx.so.1", "LD_LIBRARY_PATH"),
            t("/a/x86_64/libx.so.1", "LD_LIBRARY_PATH"),
            t("/a/libx.so.1", "LD_LIBRARY_PATH"),
            t("/lib/x86_64-linux-gnu/libx.so.1", "default-dir"),
            t("/lib/tls/libx.so.1", "default-dir"),
            t("/lib/libx.so.1", "default-dir"),
        ];
        let rows: Vec<(String, usize)> = compact_tried(&tried)
            .into_iter()
            .map(|r| (r.path, r.folded))
            .collect();
        let want: Vec<(String, usize)> = [
            ("/a/b/libx.so.1", 4),
            ("/a/libx.so.1", 1),
            ("/lib/x86_64-linux-gnu/libx.so.1", 0),
            ("/lib/libx.so.1", 1),
        ]
        .iter()
        .map(|(p, n)| (p.to_string(), *n))
        .collect();
        assert_eq!(rows, want);
    }
}
