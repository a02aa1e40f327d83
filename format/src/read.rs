//! Reader side of the format: typed events parsed from trace lines.
//!
//! Readers must be forgiving: a trace may end in a half-written line (the
//! process was killed mid-`write`, which `O_APPEND` makes rare but not
//! impossible on a full disk), and newer shims may add event kinds. So
//! parsing is per line, and every failure says what was wrong.

use serde::Deserialize;
use std::collections::BTreeMap;

/// One parsed trace line.
#[derive(Debug, Clone)]
pub enum Event {
    Process(Process),
    Load(Load),
    LoadFailed(LoadFailed),
    Unload(Unload),
    DlError(DlError),
    Note(Note),
    Pin(Pin),
}

/// Why a line could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineError {
    /// Not JSON, or JSON that is not an object (includes a truncated last line).
    NotJson(String),
    /// A JSON object without a string `ev` field.
    NoKind,
    /// An event kind this reader does not know (from a newer shim?).
    UnknownKind(String),
    /// A known kind whose fields do not match the schema.
    BadFields { kind: String, detail: String },
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineError::NotJson(e) => write!(f, "not a JSON object ({e})"),
            LineError::NoKind => write!(f, "JSON object without an \"ev\" field"),
            LineError::UnknownKind(k) => write!(f, "unknown event kind {k:?}"),
            LineError::BadFields { kind, detail } => write!(f, "bad {kind:?} event: {detail}"),
        }
    }
}

/// Parses one line (without its newline).
pub fn parse_line(line: &str) -> Result<Event, LineError> {
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| LineError::NotJson(e.to_string()))?;
    if !value.is_object() {
        return Err(LineError::NotJson("not an object".into()));
    }
    let kind = value
        .get("ev")
        .and_then(|v| v.as_str())
        .ok_or(LineError::NoKind)?
        .to_string();
    fn typed<T: for<'de> Deserialize<'de>>(
        kind: &str,
        v: serde_json::Value,
    ) -> Result<T, LineError> {
        serde_json::from_value(v).map_err(|e| LineError::BadFields {
            kind: kind.to_string(),
            detail: e.to_string(),
        })
    }
    Ok(match kind.as_str() {
        crate::ev::PROCESS => Event::Process(typed(&kind, value)?),
        crate::ev::LOAD => Event::Load(typed(&kind, value)?),
        crate::ev::LOAD_FAILED => Event::LoadFailed(typed(&kind, value)?),
        crate::ev::UNLOAD => Event::Unload(typed(&kind, value)?),
        crate::ev::DLERROR => Event::DlError(typed(&kind, value)?),
        crate::ev::NOTE => Event::Note(typed(&kind, value)?),
        crate::ev::PIN => Event::Pin(typed(&kind, value)?),
        _ => return Err(LineError::UnknownKind(kind)),
    })
}

/// The header line of a trace file.
#[derive(Debug, Clone, Deserialize)]
pub struct Process {
    /// Schema version ([`crate::SCHEMA_VERSION`]).
    pub v: u32,
    /// Version of the shim that wrote the file.
    pub shim: String,
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    pub t_ns: u64,
    /// Wall-clock time of the header, milliseconds since the Unix epoch.
    pub wall_ms: u64,
    pub exe: Option<String>,
    #[serde(default)]
    pub argv: Vec<String>,
    pub hostname: Option<String>,
    pub cwd: Option<String>,
    /// The variables of [`crate::HEADER_ENV`] that were set.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// `cuda` or `all`.
    pub mode: String,
    /// `exec` for a new program image, `fork` for a forked child.
    pub origin: String,
    /// The glibc version the process runs on.
    pub glibc: Option<String>,
    /// Whether the `dlopen` result hook (the preload role) is active; without
    /// it failures are detected later and requests served by already-loaded
    /// objects are not seen.
    #[serde(default)]
    pub preload: bool,
    /// The cuDNN pin in force in this process, if any (`docs/pin.md`).
    #[serde(default)]
    pub pin: Option<PinSettings>,
}

/// `pin` of the process header.
#[derive(Debug, Clone, Deserialize)]
pub struct PinSettings {
    /// The pin directory, as the shim resolved it.
    pub dir: String,
    /// [`crate::pin::STRICT`] or [`crate::pin::WARN`].
    pub mode: String,
}

/// One candidate path the loader tried for a request.
#[derive(Debug, Clone, Deserialize)]
pub struct Tried {
    pub path: String,
    /// Which search step offered it (same vocabulary as [`crate::reason`]).
    pub reason: String,
    /// [`crate::tried`]: `missing`, `rejected` or `used`.
    pub result: String,
}

/// A library that entered the process, or a request served by one already there.
#[derive(Debug, Clone, Deserialize)]
pub struct Load {
    pub seq: u64,
    pub t_ns: u64,
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    /// The name or path that was requested (absent for the main program, ld.so, vdso).
    pub name: Option<String>,
    /// The path the loader mapped (its `l_name`).
    pub path: String,
    /// `path` with symlinks resolved.
    pub realpath: Option<String>,
    /// [`crate::reason`].
    pub reason: String,
    /// For RPATH/RUNPATH: the object whose entry matched.
    pub reason_owner: Option<String>,
    /// The search directory in which the file was found.
    pub search_dir: Option<String>,
    /// The object that asked (dlopen caller, or owner of the DT_NEEDED entry).
    pub requester: Option<String>,
    /// [`crate::via`].
    pub via: String,
    /// `dlopen` mode flags, when the request came through `dlopen`/`dlmopen`.
    pub mode: Option<i64>,
    /// Link-map namespace (0 is the main one).
    pub lmid: i64,
    pub soname: Option<String>,
    pub dev: Option<u64>,
    pub ino: Option<u64>,
    pub size: Option<u64>,
    /// GNU build-id, lowercase hex.
    pub build_id: Option<String>,
    /// CUDA family (`cudnn`, `cudart`, `cuda`, …) or null.
    pub family: Option<String>,
    /// Candidates tried before (and including) the one used.
    #[serde(default)]
    pub tried: Vec<Tried>,
    /// False when the request was served by an object already loaded.
    #[serde(default = "yes")]
    pub new: bool,
}

fn yes() -> bool {
    true
}

/// A failed load request.
#[derive(Debug, Clone, Deserialize)]
pub struct LoadFailed {
    pub seq: u64,
    pub t_ns: u64,
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    pub name: String,
    pub requester: Option<String>,
    pub via: String,
    pub mode: Option<i64>,
    pub lmid: i64,
    pub family: Option<String>,
    #[serde(default)]
    pub tried: Vec<Tried>,
    /// The loader's error text (`dlerror()`), when the shim could see it.
    pub error: Option<String>,
    /// `errno` after the failed call, when seen.
    pub errno: Option<i32>,
    /// The request failed because a dependency could not be loaded (that
    /// dependency has its own `load_failed` event).
    #[serde(default)]
    pub dependency_failed: bool,
}

/// A library that left the process.
#[derive(Debug, Clone, Deserialize)]
pub struct Unload {
    pub seq: u64,
    pub t_ns: u64,
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    pub path: String,
    pub lmid: i64,
    pub family: Option<String>,
}

/// The program read the loader's error text for failed request `req`.
#[derive(Debug, Clone, Deserialize)]
pub struct DlError {
    pub seq: u64,
    pub t_ns: u64,
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    /// `seq` of the `load_failed` event this text belongs to.
    pub req: u64,
    pub error: String,
}

/// The pin's decision about one requested cuDNN name (`docs/pin.md`).
#[derive(Debug, Clone, Deserialize)]
pub struct Pin {
    pub seq: u64,
    pub t_ns: u64,
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    /// The name or path as requested.
    pub name: String,
    pub requester: Option<String>,
    /// [`crate::pin::REROUTED`], [`crate::pin::BLOCKED`] or [`crate::pin::UNPINNED`].
    pub action: String,
    /// [`crate::pin::SAME_NAME`], [`crate::pin::SAME_MAJOR`] or [`crate::pin::NOT_IN_PIN_DIR`].
    pub rule: String,
    /// The path handed to the loader instead (null when `unpinned`).
    pub to: Option<String>,
    pub dir: String,
    pub mode: String,
}

/// A message from the shim itself.
#[derive(Debug, Clone, Deserialize)]
pub struct Note {
    pub seq: u64,
    pub t_ns: u64,
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    /// `info`, `warning` or `error`.
    pub level: String,
    pub msg: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_known_and_reports_unknown() {
        let l = r#"{"ev":"unload","seq":3,"t_ns":5,"pid":1,"ppid":0,"tid":1,"path":"/x/libcudnn.so.9","lmid":0,"family":"cudnn"}"#;
        assert!(matches!(parse_line(l), Ok(Event::Unload(u)) if u.path == "/x/libcudnn.so.9"));
        assert_eq!(
            parse_line(r#"{"ev":"future","x":1}"#).unwrap_err(),
            LineError::UnknownKind("future".into())
        );
        assert!(matches!(
            parse_line(r#"{"ev":"load","seq":1"#),
            Err(LineError::NotJson(_))
        ));
        assert_eq!(parse_line(r#"{"x":1}"#).unwrap_err(), LineError::NoKind);
        assert!(matches!(
            parse_line(r#"{"ev":"unload","seq":"x"}"#),
            Err(LineError::BadFields { .. })
        ));
    }
}
