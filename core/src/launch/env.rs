//! The environment a traced program gets: LD_PRELOAD / LD_AUDIT composed with
//! what the user already had, and the shim's own variables.
//!
//! The values are inherited by every child (fork, exec, multiprocessing,
//! torchrun workers), which is how the whole process tree gets traced.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use crate::launch::shim::{preload_path, PRELOAD_FILE, SHIM_FILE};
use crate::machine::pin::PinMode;

/// Whether an LD_PRELOAD/LD_AUDIT entry is a cudnn-trace shim or its preload
/// helper (this one or one from an outer, nested run, perhaps another
/// version): it is replaced rather than loaded twice.
fn is_shim_entry(entry: &[u8], shim: &[u8]) -> bool {
    let base = entry.rsplit(|&c| c == b'/').next();
    entry == shim || base == Some(SHIM_FILE.as_bytes()) || base == Some(PRELOAD_FILE.as_bytes())
}

/// LD_PRELOAD for the program: what the user had, then the shim. The user's
/// entries keep their places (AddressSanitizer's runtime, for one, must come
/// first in the initial library list); the shim only needs to come before
/// libc, which any preload does. glibc splits LD_PRELOAD on spaces and
/// colons; the user's value is kept verbatim unless it already names a shim,
/// which is then dropped from it.
pub fn compose_preload(existing: Option<&OsStr>, shim: &Path) -> OsString {
    let shim = shim.as_os_str().as_bytes();
    let existing = existing.map(OsStr::as_bytes).unwrap_or_default();
    let entries: Vec<&[u8]> = existing
        .split(|&c| c == b' ' || c == b':')
        .filter(|e| !e.is_empty())
        .collect();
    let mut out: Vec<u8> = Vec::new();
    if entries.iter().any(|e| is_shim_entry(e, shim)) {
        for e in entries.iter().filter(|e| !is_shim_entry(e, shim)) {
            out.extend_from_slice(e);
            out.push(b':');
        }
    } else if !entries.is_empty() {
        out.extend_from_slice(existing);
        out.push(b':');
    }
    out.extend_from_slice(shim);
    OsString::from_vec(out)
}

/// LD_AUDIT for the program: what the user had (colon-separated), then the
/// shim, without a second copy of it.
pub fn compose_audit(existing: Option<&OsStr>, shim: &Path) -> OsString {
    let shim = shim.as_os_str().as_bytes();
    let existing = existing.map(OsStr::as_bytes).unwrap_or_default();
    let mut out: Vec<u8> = Vec::new();
    for e in existing.split(|&c| c == b':') {
        if e.is_empty() || is_shim_entry(e, shim) {
            continue;
        }
        out.extend_from_slice(e);
        out.push(b':');
    }
    out.extend_from_slice(shim);
    OsString::from_vec(out)
}

/// Variables to set and to remove for the traced program.
pub struct ProgramEnv {
    pub set: Vec<(OsString, OsString)>,
    pub remove: Vec<OsString>,
}

impl ProgramEnv {
    /// Adds the cuDNN pin (`docs/pin.md`): `dir` must be the validated,
    /// canonical directory, so that every process of the tree (whatever its
    /// working directory) resolves it the same way.
    pub fn add_pin(&mut self, dir: &Path, mode: PinMode) {
        use cudnn_trace_format::envvar;
        self.set
            .push((envvar::PIN.into(), dir.as_os_str().to_os_string()));
        self.set
            .push((envvar::PIN_MODE.into(), OsString::from(mode.as_str())));
    }
}

/// The environment of a pinned program that runs without a trace directory
/// (it could not be made). The pin lives in the shim's audit role alone, so
/// the shim goes into LD_AUDIT only (the LD_PRELOAD role just reports
/// `dlopen` results to the trace), and with no CUDNN_TRACE_DIR from us it
/// writes nothing. The rest of the environment stays as the launcher got
/// it, as for any untraced run.
pub fn pin_only_env(
    shim: &Path,
    dir: &Path,
    mode: PinMode,
    get: impl Fn(&str) -> Option<OsString>,
) -> ProgramEnv {
    use cudnn_trace_format::envvar;
    let mut env = ProgramEnv {
        set: vec![
            (envvar::SHIM.into(), shim.as_os_str().to_os_string()),
            (
                "LD_AUDIT".into(),
                compose_audit(get("LD_AUDIT").as_deref(), shim),
            ),
        ],
        // CUDNN_TRACE=0 would turn the shim off, and the pin with it.
        remove: vec![envvar::ENABLE.into()],
    };
    env.add_pin(dir, mode);
    env
}

pub fn program_env(
    shim: &Path,
    out_dir: &Path,
    all: bool,
    get: impl Fn(&str) -> Option<OsString>,
) -> ProgramEnv {
    use cudnn_trace_format::envvar;
    let set = vec![
        (envvar::OUT_DIR.into(), out_dir.as_os_str().to_os_string()),
        (
            envvar::MODE.into(),
            OsString::from(if all { "all" } else { "cuda" }),
        ),
        (envvar::SHIM.into(), shim.as_os_str().to_os_string()),
        (
            "LD_AUDIT".into(),
            compose_audit(get("LD_AUDIT").as_deref(), shim),
        ),
        // The preload helper, not the audit library: it brings nothing
        // into the program's link map (issue 14).
        (
            "LD_PRELOAD".into(),
            compose_preload(get("LD_PRELOAD").as_deref(), &preload_path(shim)),
        ),
    ];
    // CUDNN_TRACE=0 makes an inherited shim inert; running under the launcher
    // means tracing is wanted.
    let remove = vec![envvar::ENABLE.into()];
    ProgramEnv { set, remove }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHIM: &str = "/c/cudnn-trace/0.1.0-ab/libcdtrace.so";
    const HELPER: &str = "/c/cudnn-trace/0.1.0-ab/libcdtrace_preload.so";

    fn pre(existing: Option<&str>) -> String {
        compose_preload(existing.map(OsStr::new), Path::new(SHIM))
            .into_string()
            .unwrap()
    }

    fn aud(existing: Option<&str>) -> String {
        compose_audit(existing.map(OsStr::new), Path::new(SHIM))
            .into_string()
            .unwrap()
    }

    #[test]
    fn preload_keeps_user_value_first() {
        assert_eq!(pre(None), SHIM);
        assert_eq!(pre(Some("")), SHIM);
        assert_eq!(pre(Some("  ")), SHIM);
        assert_eq!(pre(Some("/x/libfoo.so")), format!("/x/libfoo.so:{SHIM}"));
        // Space-separated user values are kept verbatim, and in front (a
        // sanitizer runtime must stay first).
        assert_eq!(
            pre(Some("libasan.so.8 libB.so")),
            format!("libasan.so.8 libB.so:{SHIM}")
        );
        assert_eq!(pre(Some("$LIB/x.so")), format!("$LIB/x.so:{SHIM}"));
    }

    #[test]
    fn preload_nested_run_has_no_duplicates() {
        assert_eq!(pre(Some(SHIM)), SHIM);
        assert_eq!(
            pre(Some(&format!("{SHIM}:/x/libfoo.so"))),
            format!("/x/libfoo.so:{SHIM}")
        );
        assert_eq!(
            pre(Some(&format!("/x/libfoo.so:{SHIM}"))),
            format!("/x/libfoo.so:{SHIM}")
        );
        // An outer run with another shim copy (other version / cache dir).
        assert_eq!(
            pre(Some("/x/libfoo.so /old/cache/libcdtrace.so:libB.so")),
            format!("/x/libfoo.so:libB.so:{SHIM}")
        );
    }

    #[test]
    fn audit_appends_without_duplicates() {
        assert_eq!(aud(None), SHIM);
        assert_eq!(aud(Some("")), SHIM);
        assert_eq!(
            aud(Some("/a/libaudit.so")),
            format!("/a/libaudit.so:{SHIM}")
        );
        assert_eq!(
            aud(Some("/a/x.so::/b/y.so")),
            format!("/a/x.so:/b/y.so:{SHIM}")
        );
        assert_eq!(aud(Some(SHIM)), SHIM);
        assert_eq!(
            aud(Some(&format!("{SHIM}:/a/x.so"))),
            format!("/a/x.so:{SHIM}")
        );
        assert_eq!(aud(Some("/old/libcdtrace.so")), SHIM);
    }

    #[test]
    fn program_env_sets_everything() {
        let env = program_env(Path::new(SHIM), Path::new("/out"), true, |k| {
            (k == "LD_PRELOAD").then(|| OsString::from("/u.so"))
        });
        let get = |k: &str| {
            env.set
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.to_str().unwrap().to_string())
        };
        assert_eq!(get("CUDNN_TRACE_DIR").as_deref(), Some("/out"));
        assert_eq!(get("CUDNN_TRACE_MODE").as_deref(), Some("all"));
        assert_eq!(get("CUDNN_TRACE_SHIM").as_deref(), Some(SHIM));
        assert_eq!(get("LD_AUDIT").as_deref(), Some(SHIM));
        // LD_PRELOAD gets the preload helper next to the shim (issue 14).
        assert_eq!(get("LD_PRELOAD"), Some(format!("/u.so:{HELPER}")));
        // An outer run's audit library or helper in LD_PRELOAD is replaced.
        let env = program_env(Path::new(SHIM), Path::new("/out"), true, |k| {
            (k == "LD_PRELOAD")
                .then(|| OsString::from("/old/libcdtrace.so:/u.so:/old/libcdtrace_preload.so"))
        });
        assert_eq!(value(&env, "LD_PRELOAD"), Some(format!("/u.so:{HELPER}")));
        assert_eq!(env.remove, vec![OsString::from("CUDNN_TRACE")]);
    }

    fn value(env: &ProgramEnv, k: &str) -> Option<String> {
        env.set
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.to_str().unwrap().to_string())
    }

    #[test]
    fn pin_variables() {
        let mut env = program_env(Path::new(SHIM), Path::new("/out"), false, |_| None);
        env.add_pin(Path::new("/pin dir"), PinMode::Warn);
        assert_eq!(value(&env, "CUDNN_TRACE_PIN").as_deref(), Some("/pin dir"));
        assert_eq!(value(&env, "CUDNN_TRACE_PIN_MODE").as_deref(), Some("warn"));
        assert_eq!(value(&env, "LD_PRELOAD").as_deref(), Some(HELPER));

        // Untraced but pinned: the audit role only, nothing written.
        let env = pin_only_env(Path::new(SHIM), Path::new("/pin"), PinMode::Strict, |k| {
            (k == "LD_AUDIT").then(|| OsString::from("/a/x.so"))
        });
        assert_eq!(value(&env, "LD_AUDIT"), Some(format!("/a/x.so:{SHIM}")));
        assert_eq!(value(&env, "CUDNN_TRACE_PIN").as_deref(), Some("/pin"));
        assert_eq!(
            value(&env, "CUDNN_TRACE_PIN_MODE").as_deref(),
            Some("strict")
        );
        assert_eq!(value(&env, "LD_PRELOAD"), None);
        assert_eq!(value(&env, "CUDNN_TRACE_DIR"), None);
        assert_eq!(env.remove, vec![OsString::from("CUDNN_TRACE")]);
    }
}
