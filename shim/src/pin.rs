//! The cuDNN pin: every cuDNN library a process asks for comes from one
//! directory (`docs/pin.md`).
//!
//! It works in `la_objsearch(LA_SER_ORIG)`, which glibc calls for every name
//! it is about to search, DT_NEEDED entries of the executable included, and
//! for absolute paths too, before any search directory is consulted
//! (`LA_SER_ORIG` in rtld-audit(7) \[R43\]; glibc `elf/dl-load.c`,
//! `_dl_map_object`). Returning a path in the pin directory there makes the
//! loader open that file instead. A constructor that `dlopen`s the pinned
//! copy would be too late for the executable's DT_NEEDED (ld.so(8) maps those
//! before any constructor runs), and an absolute path would then load a
//! second copy (dlopen(3) opens a name with a slash as that file \[R34\]);
//! rewriting every request has neither problem (tests/scenarios
//! `30_pin_abs_path_v9`, `32_pin_exe_needed`). Only the audit role is
//! needed, so production can pin with `LD_AUDIT` and two variables.
//!
//! Runs in the audit namespace with the loader's lock held: it reads the
//! directory (its own libc) and never calls into the loader.

use crate::lock::ForkSafeLock;
use cudnn_trace_format::{basename, cudnn_name, envvar, pin};
use std::collections::BTreeMap;
use std::ffi::{CStr, CString, OsStr};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::sync::OnceLock;

/// The pin as configured for this process.
pub struct Settings {
    /// The directory, resolved with `realpath` when it exists (so that the
    /// rewritten paths are the ones the loader will show), else as given.
    pub dir: Vec<u8>,
    pub strict: bool,
}

impl Settings {
    /// [`pin::STRICT`] or [`pin::WARN`], as events and the header write it.
    pub fn mode(&self) -> &'static str {
        if self.strict {
            pin::STRICT
        } else {
            pin::WARN
        }
    }
}

/// What the directory holds, read once, on the first cuDNN request.
struct Listing {
    /// Names of the cuDNN files in the directory, or why it could not be read.
    files: Result<Vec<Vec<u8>>, String>,
}

/// What the pin does with one requested name.
pub struct Decision {
    /// One of [`pin::REROUTED`], [`pin::BLOCKED`], [`pin::UNPINNED`].
    pub action: &'static str,
    pub rule: &'static str,
    /// The path handed to the loader instead of the name; `None` when the
    /// name is left as it was (`unpinned`).
    pub to: Option<&'static CStr>,
}

static SETTINGS: OnceLock<Option<Settings>> = OnceLock::new();
static LISTING: OnceLock<Listing> = OnceLock::new();
/// Rewritten paths handed to the loader. ld.so keeps the pointer we return,
/// so each distinct path is allocated once and never freed.
static PATHS: ForkSafeLock<BTreeMap<Vec<u8>, CString>> = ForkSafeLock::new(BTreeMap::new());

/// The pin settings, or `None` when this process is not pinned.
pub fn settings() -> Option<&'static Settings> {
    SETTINGS.get_or_init(read_settings).as_ref()
}

fn read_settings() -> Option<Settings> {
    // In a setuid or setcap program the caller's environment must not
    // choose which cuDNN a privileged process runs: no pin, strict or not
    // (docs/security.md). glibc applies the same rule to LD_LIBRARY_PATH.
    if std::env::var_os(envvar::ENABLE).is_some_and(|v| v == "0") || crate::say::secure_execution()
    {
        return None;
    }
    let dir = std::env::var_os(envvar::PIN).filter(|d| !d.is_empty())?;
    let dir = dir.as_bytes();
    // Anything but "warn" is strict: a typo must not silently unpin.
    let strict = std::env::var_os(envvar::PIN_MODE).is_none_or(|m| m != pin::WARN);
    let canonical = std::fs::canonicalize(OsStr::from_bytes(dir))
        .map(|p| p.into_os_string().into_vec())
        .unwrap_or_else(|_| trim_trailing_slashes(dir).to_vec());
    Some(Settings {
        dir: canonical,
        strict,
    })
}

/// `d` without trailing slashes (`/` stays `/`).
pub fn trim_trailing_slashes(mut d: &[u8]) -> &[u8] {
    while d.len() > 1 && d.ends_with(b"/") {
        d = &d[..d.len() - 1];
    }
    d
}

fn listing(s: &Settings) -> &'static Listing {
    LISTING.get_or_init(|| {
        let files = std::fs::read_dir(OsStr::from_bytes(&s.dir))
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().into_vec())
                    .filter(|n| cudnn_name(n).is_some())
                    .collect()
            })
            .map_err(|e| crate::say::errno_text(e.raw_os_error().unwrap_or(0)));
        let l = Listing { files };
        if let Err(why) = &l.files {
            complain(s, why);
        }
        l
    })
}

/// Reads the directory now (from `la_version`): a directory that cannot be
/// read is said at the start of every process of the tree, so by its top
/// alone (`say`).
pub fn check() {
    if let Some(s) = settings() {
        listing(s);
    }
}

/// One line on stderr, once per process tree, when the directory cannot be
/// read: the program keeps running; in strict mode its cuDNN loads will
/// fail. The trace of each process says it too.
fn complain(s: &Settings, why: &str) {
    let effect = if s.strict {
        "cuDNN loads will fail (strict pin)"
    } else {
        "the pin is ignored (warn mode)"
    };
    let msg = format!(
        "pin directory {} cannot be read ({why}): {effect}",
        crate::say::esc(&s.dir)
    );
    if crate::say::top_of_tree() {
        crate::say::line(&msg);
    }
    crate::trace::note("warning", &format!("cudnn-trace: {msg}"));
}

/// The path in the directory that `name` (a requested name or path) maps
/// to, and the rule that chose it; `None` when the directory has no such
/// library. Pure: `files` are the cuDNN file names the directory holds.
fn choose(files: &[Vec<u8>], name: &[u8]) -> Option<(Vec<u8>, &'static str)> {
    let base = basename(name);
    if files.iter().any(|f| f == base) {
        return Some((base.to_vec(), pin::SAME_NAME));
    }
    let (stem, version) = cudnn_name(base)?;
    // The SONAME file `stem.so.<major>` of the requested major (any major
    // when the request names none, as `libcudnn.so` does).
    files
        .iter()
        .filter_map(|f| {
            let (s, v) = cudnn_name(f)?;
            (s == stem && v.len() == 1 && version.first().is_none_or(|&m| m == v[0])).then_some(f)
        })
        .min()
        .map(|f| (f.clone(), pin::SAME_MAJOR))
}

fn join(dir: &[u8], file: &[u8]) -> Vec<u8> {
    let mut p = dir.to_vec();
    if !p.ends_with(b"/") {
        p.push(b'/');
    }
    p.extend_from_slice(file);
    p
}

fn intern(path: Vec<u8>) -> Option<&'static CStr> {
    PATHS.with(|m| {
        if !m.contains_key(&path) {
            let c = CString::new(path.clone()).ok()?;
            m.insert(path.clone(), c);
        }
        let c: &CStr = m.get(&path)?.as_c_str();
        // SAFETY: entries are never removed, and a CString's buffer does not
        // move when the map rebalances (only the CString handle does).
        Some(unsafe { &*(c as *const CStr) })
    })
}

/// Already a request for the very file the pin would choose: a path whose
/// directory is the pin directory.
fn names_pinned_file(dir: &[u8], name: &[u8], chosen: &[u8]) -> bool {
    let Some(i) = name.iter().rposition(|&c| c == b'/') else {
        return false;
    };
    if &name[i + 1..] != chosen {
        return false;
    }
    let parent = trim_trailing_slashes(&name[..i.max(1)]);
    parent == dir
        || std::fs::canonicalize(OsStr::from_bytes(parent))
            .is_ok_and(|p| p.as_os_str().as_bytes() == dir)
}

/// The pin's decision for a name the loader is about to search, or `None`
/// when the pin has nothing to say (not pinned, not a cuDNN name, or a
/// request that already names the pinned file).
pub fn decide(name: &[u8]) -> Option<Decision> {
    let s = settings()?;
    cudnn_name(name)?;
    let chosen = match &listing(s).files {
        Ok(files) => choose(files, name),
        Err(_) => None,
    };
    match chosen {
        Some((file, _)) if names_pinned_file(&s.dir, name, &file) => None,
        Some((file, rule)) => Some(Decision {
            action: pin::REROUTED,
            rule,
            to: Some(intern(join(&s.dir, &file))?),
        }),
        None if s.strict => Some(Decision {
            action: pin::BLOCKED,
            rule: pin::NOT_IN_PIN_DIR,
            to: Some(intern(join(&s.dir, basename(name)))?),
        }),
        None => Some(Decision {
            action: pin::UNPINNED,
            rule: pin::NOT_IN_PIN_DIR,
            to: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(names: &[&str]) -> Vec<Vec<u8>> {
        names.iter().map(|n| n.as_bytes().to_vec()).collect()
    }

    fn pick(fs: &[Vec<u8>], name: &str) -> Option<(String, &'static str)> {
        choose(fs, name.as_bytes()).map(|(f, r)| (String::from_utf8(f).unwrap(), r))
    }

    #[test]
    fn pip_layout_serves_every_variant_from_the_soname_file() {
        let fs = files(&["libcudnn.so.9", "libcudnn_graph.so.9", "libcudnn_ops.so.9"]);
        let graph = Some(("libcudnn_graph.so.9".to_string(), pin::SAME_MAJOR));
        assert_eq!(pick(&fs, "libcudnn_graph.so.9.19.0"), graph);
        assert_eq!(pick(&fs, "libcudnn_graph.so.9.19"), graph);
        assert_eq!(pick(&fs, "libcudnn_graph.so"), graph);
        assert_eq!(
            pick(&fs, "libcudnn_graph.so.9"),
            Some(("libcudnn_graph.so.9".to_string(), pin::SAME_NAME))
        );
        assert_eq!(
            pick(&fs, "/site/nvidia/cudnn/lib/libcudnn.so.9"),
            Some(("libcudnn.so.9".to_string(), pin::SAME_NAME))
        );
        // Another major, or a library the directory lacks: nothing.
        assert_eq!(pick(&fs, "libcudnn.so.8"), None);
        assert_eq!(pick(&fs, "libcudnn_engines_tensor_ir.so.9"), None);
        assert_eq!(pick(&fs, "libcublas.so.13"), None);
    }

    #[test]
    fn versioned_layout_matches_names_exactly() {
        let fs = files(&[
            "libcudnn_graph.so.9.14.0",
            "libcudnn_graph.so.9",
            "libcudnn_graph.so",
        ]);
        assert_eq!(
            pick(&fs, "libcudnn_graph.so.9.14.0").map(|p| p.1),
            Some(pin::SAME_NAME)
        );
        assert_eq!(
            pick(&fs, "libcudnn_graph.so.9.14"),
            Some(("libcudnn_graph.so.9".to_string(), pin::SAME_MAJOR))
        );
    }

    #[test]
    fn paths_inside_the_pin_dir_are_left_alone() {
        assert!(names_pinned_file(
            b"/pin",
            b"/pin/libcudnn.so.9",
            b"libcudnn.so.9"
        ));
        assert!(names_pinned_file(
            b"/pin",
            b"/pin//libcudnn.so.9",
            b"libcudnn.so.9"
        ));
        assert!(!names_pinned_file(
            b"/pin",
            b"/other/libcudnn.so.9",
            b"libcudnn.so.9"
        ));
        assert!(!names_pinned_file(
            b"/pin",
            b"libcudnn.so.9",
            b"libcudnn.so.9"
        ));
        // Same directory, but a name variant the pin maps elsewhere.
        assert!(!names_pinned_file(
            b"/pin",
            b"/pin/libcudnn_graph.so.9.19.0",
            b"libcudnn_graph.so.9"
        ));
    }
}
