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
    Version(Version),
    Call(Call),
    CallCounts(CallCounts),
    DriverClient(DriverClient),
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

/// Parses one line (without its newline). A line laid out as the shim
/// writes it, `{"ev":"KIND",…` first, is parsed straight into its type
/// ([`parse_line_of_kind`]); any other goes through a JSON value first.
pub fn parse_line(line: &str) -> Result<Event, LineError> {
    match leading_kind(line) {
        Some(kind) => parse_line_of_kind(kind, line),
        None => parse_value(line),
    }
}

/// The `ev` of a line that starts `{"ev":"KIND"` (the shim's layout).
fn leading_kind(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("{\"ev\":\"")?;
    let end = rest.find('"')?;
    Some(&rest[..end])
}

/// [`parse_line`] through a `serde_json::Value`: slower, but it tells what
/// is wrong with a line (not JSON, no `ev`, an unknown kind, bad fields).
fn parse_value(line: &str) -> Result<Event, LineError> {
    let line = decode_byte_escapes(line);
    let value: serde_json::Value =
        serde_json::from_str(&line).map_err(|e| LineError::NotJson(e.to_string()))?;
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
        crate::ev::VERSION => Event::Version(typed(&kind, value)?),
        crate::ev::CALL => Event::Call(typed(&kind, value)?),
        crate::ev::CALL_COUNTS => Event::CallCounts(typed(&kind, value)?),
        crate::ev::DRIVER_CLIENT => Event::DriverClient(typed(&kind, value)?),
        _ => return Err(LineError::UnknownKind(kind)),
    })
}

/// [`parse_line`] for a line whose `ev` was read from its start (the
/// shim's layout, where it comes first): parsed straight into its type,
/// without building a JSON value first, which is most of the cost of a
/// line (and of a file's header: one per file in a fleet's traces). Any
/// failure falls back to the value path, so that the errors (and what
/// counts as one) are the same.
fn parse_line_of_kind(kind: &str, line: &str) -> Result<Event, LineError> {
    fn typed<T: for<'de> Deserialize<'de>>(line: &str) -> Option<T> {
        serde_json::from_str(&decode_byte_escapes(line)).ok()
    }
    let ev = match kind {
        crate::ev::PROCESS => typed(line).map(Event::Process),
        crate::ev::LOAD => typed(line).map(Event::Load),
        crate::ev::LOAD_FAILED => typed(line).map(Event::LoadFailed),
        crate::ev::UNLOAD => typed(line).map(Event::Unload),
        crate::ev::DLERROR => typed(line).map(Event::DlError),
        crate::ev::NOTE => typed(line).map(Event::Note),
        crate::ev::PIN => typed(line).map(Event::Pin),
        crate::ev::VERSION => typed(line).map(Event::Version),
        crate::ev::CALL => typed(line).map(Event::Call),
        crate::ev::CALL_COUNTS => typed(line).map(Event::CallCounts),
        crate::ev::DRIVER_CLIENT => typed(line).map(Event::DriverClient),
        _ => None,
    };
    ev.map_or_else(|| parse_value(line), Ok)
}

/// A trace line with each `\udcNN` escape (a byte that is not UTF-8,
/// [`crate::json`]) replaced by the character that stands for that byte in
/// a `String` ([`crate::escape::RAW_BYTE_BASE`]), which a JSON parser takes
/// as it is. A surrogate pair, and every other escape, is left alone.
pub fn decode_byte_escapes(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains("\\udc") && !line.contains("\\uDC") {
        return std::borrow::Cow::Borrowed(line);
    }
    let b = line.as_bytes();
    let hex = |i: usize| -> Option<u32> {
        let h = line.get(i..i + 4)?;
        h.bytes()
            .all(|c| c.is_ascii_hexdigit())
            .then(|| u32::from_str_radix(h, 16).ok())?
    };
    let mut out = String::with_capacity(line.len());
    let (mut i, mut copied, mut after_high) = (0, 0, false);
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        if b.get(i + 1) != Some(&b'u') {
            after_high = false;
            i += 2;
            continue;
        }
        let Some(v) = hex(i + 2) else {
            i += 2;
            continue;
        };
        if !after_high && (0xdc80..=0xdcff).contains(&v) {
            out.push_str(&line[copied..i]);
            out.extend(char::from_u32(crate::escape::RAW_BYTE_BASE + (v - 0xdc00)));
            copied = i + 6;
        }
        after_high = (0xd800..=0xdbff).contains(&v);
        i += 6;
    }
    out.push_str(&line[copied..]);
    std::borrow::Cow::Owned(out)
}

/// The header line of a trace file.
#[derive(Debug, Clone, Deserialize)]
pub struct Process {
    /// Events of this file the shim could not write (a full disk, a quota,
    /// an I/O error), rewritten in place as they are lost; absent in traces
    /// of older shims.
    #[serde(default)]
    pub lost: u64,
    /// The `errno` of the first write that failed (28 `ENOSPC`, 122
    /// `EDQUOT`), also set when only the start-up window found no room;
    /// 0 when none failed.
    #[serde(default)]
    pub lost_errno: i32,
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
    /// Whether calls are recorded and libraries asked for their versions:
    /// `on`, `off` (`CUDNN_TRACE_CALLS=0`) or `needs-glibc-2.35`; absent in
    /// traces of older shims.
    #[serde(default)]
    pub calls: Option<String>,
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
    /// When the loader's search for this request began (CLOCK_MONOTONIC
    /// ns, as `t_ns`): the load took `t_ns - t_start_ns`. Absent for a
    /// load with no search (the main program, a dlopen served by a handle
    /// already open) and in traces of older shims.
    #[serde(default)]
    pub t_start_ns: Option<u64>,
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
    /// The directory the loader found the file in, exactly as it searched
    /// it (a hardware-capability subdirectory such as `x86_64` or
    /// `glibc-hwcaps/x86-64-v2` included).
    pub search_dir: Option<String>,
    /// The entry of the search list (LD_LIBRARY_PATH, an RPATH/RUNPATH
    /// after `$ORIGIN` expansion, a default or ld.so.cache directory) that
    /// `search_dir` came from: `search_dir` itself, or its parent when the
    /// loader tried a hardware-capability subdirectory of it. Absent in
    /// traces of older shims.
    #[serde(default)]
    pub search_entry: Option<String>,
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
    /// How the family was known: `name` (the requested name or the file
    /// name), `soname`, `symbol` (the object defines `cudnnGetVersion`,
    /// `cudaRuntimeGetVersion` or `cuInit`). Absent in older traces.
    #[serde(default)]
    pub family_by: Option<String>,
    /// A stub of its family (a `stubs` directory in its path, or `_stub` in
    /// its file name): never a copy of the library it stands in for.
    #[serde(default)]
    pub stub: bool,
    /// Candidates tried before (and including) the one used.
    #[serde(default)]
    pub tried: Vec<Tried>,
    /// False when the request was served by an object already loaded.
    #[serde(default = "yes")]
    pub new: bool,
    /// [`LdLibraryPathNow`]: the program's LD_LIBRARY_PATH at the request,
    /// when it had changed it after start-up.
    #[serde(default, deserialize_with = "present")]
    pub ld_library_path_now: LdLibraryPathNow,
}

/// The program's `LD_LIBRARY_PATH` when it made a request, written only
/// when it differs from the start-up value that ld.so searches (the
/// process header's `env.LD_LIBRARY_PATH`): `Some(Some(value))`, or
/// `Some(None)` when the program had removed it. None when it was the
/// start-up value, and in traces of older shims.
pub type LdLibraryPathNow = Option<Option<String>>;

fn yes() -> bool {
    true
}

/// A field that may be absent, null or a value: absent is `None`, null
/// `Some(None)` (with `#[serde(default)]`).
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// A failed load request.
#[derive(Debug, Clone, Deserialize)]
pub struct LoadFailed {
    pub seq: u64,
    pub t_ns: u64,
    /// When the search began, as in [`Load::t_start_ns`].
    #[serde(default)]
    pub t_start_ns: Option<u64>,
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
    /// A start-up search during which the process ended: ld.so found none
    /// of the candidates and exited with status 127 (`error while loading
    /// shared libraries`), with no callback after the last one. Written
    /// before the outcome was known (see docs/trace-format.md).
    #[serde(default)]
    pub fatal: bool,
    /// As [`Load::ld_library_path_now`].
    #[serde(default, deserialize_with = "present")]
    pub ld_library_path_now: LdLibraryPathNow,
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

/// What a CUDA-family library says about its own version
/// (`docs/versions-and-calls.md`).
#[derive(Debug, Clone, Deserialize)]
pub struct Version {
    pub seq: u64,
    pub t_ns: u64,
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    /// The object's path, as in its `load` event.
    pub path: String,
    /// `cudnn`, `cudart` or `cuda`.
    pub family: Option<String>,
    /// [`crate::version_source`]: `query`, `file-name` or `elf`.
    pub source: String,
    /// `"9.19.0"`, `"13.0"`, `"9"` (major only, from the SONAME); null when
    /// the query failed or (cuDNN sub-library check) did not match.
    pub version: Option<String>,
    /// The integer the version function returned (91900, 13000).
    pub raw: Option<i64>,
    /// cuDNN core library: `cudnnGetCudartVersion()`.
    pub cuda_build: Option<i64>,
    /// cuDNN core library: `cudnnGetMaxDeviceVersion()`.
    pub max_device: Option<i64>,
    /// cuDNN sub-library: what its `*VersionCheck` returned (0 ok; 1002 or
    /// 14 mismatch).
    pub check: Option<i64>,
    /// With `check`: the core library (graph / ops_infer) it was checked against.
    pub core: Option<String>,
    /// cudart / libcuda query: the status the version function returned.
    pub status: Option<i64>,
    /// libcuda: the driver version in its file name (`580.159.04`).
    pub driver_file: Option<String>,
    /// Source `query`: who called the library's version function: `shim`
    /// (one of the queries proven free of side effects) or `program` (the
    /// program or one of its libraries did; the shim saw the answer). Absent
    /// in traces of older shims, which asked everything themselves.
    #[serde(default)]
    pub asked_by: Option<String>,
}

/// One of the first calls to a tracked function of one library.
#[derive(Debug, Clone, Deserialize)]
pub struct Call {
    pub seq: u64,
    pub t_ns: u64,
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    /// The function called (`cudnnCreate`).
    #[serde(rename = "fn")]
    pub function: String,
    /// Path of the object that served the call (the copy).
    pub lib: String,
    /// 1-based number of this call, per function and library.
    pub n: u64,
    /// [`crate::call_via`]: `plt`, `dlsym` or `cuGetProcAddress`.
    pub via: String,
    /// Return value of a status-returning function.
    pub status: Option<i64>,
    /// The value returned or written (versions).
    pub value: Option<i64>,
    /// `cudnnGetProperty`: the property asked for (0 major, 1 minor, 2 patch).
    pub prop: Option<i64>,
    /// Duration in nanoseconds (`cudnnCreate`, `cuInit`).
    pub dur_ns: Option<u64>,
    /// Device-attribute calls (`cuDeviceGetAttribute`,
    /// `cudaDeviceGetAttribute`): the attribute (75 compute capability
    /// major, 76 minor) and the device ordinal; absent on other calls.
    #[serde(default)]
    pub attr: Option<i64>,
    #[serde(default)]
    pub device: Option<i64>,
}

/// Call totals of one function in one library.
#[derive(Debug, Clone, Deserialize)]
pub struct CallCount {
    #[serde(rename = "fn")]
    pub function: String,
    pub lib: String,
    /// Every call, the recorded first few included.
    pub n: u64,
}

/// Totals for functions called more than [`crate::CALLS_RECORDED`] times.
#[derive(Debug, Clone, Deserialize)]
pub struct CallCounts {
    pub seq: u64,
    pub t_ns: u64,
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    /// [`crate::counts_at`]: `exit` or `unload`.
    pub at: String,
    #[serde(default)]
    pub counts: Vec<CallCount>,
}

/// An object that obtained the CUDA driver's entry-point resolver
/// (`cuGetProcAddress` / `cuGetProcAddress_v2`), through the PLT or `dlsym`:
/// every CUDA runtime does, the shared one (`libcudart.so.N`) and one linked
/// statically into another object (nvcc's default; CuPy's runtime module).
#[derive(Debug, Clone, Deserialize)]
pub struct DriverClient {
    pub seq: u64,
    pub t_ns: u64,
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    /// The object (its `l_name`; the executable's path for the program).
    pub path: String,
    pub lmid: i64,
    /// Its CUDA family (`cudart` for a shared runtime), or null.
    pub family: Option<String>,
    /// True when the object is no CUDA runtime library (nor the driver): it
    /// carries a CUDA runtime linked into it.
    pub static_runtime: bool,
    /// `cuGetProcAddress` or `cuGetProcAddress_v2`.
    #[serde(rename = "fn")]
    pub function: String,
    /// `plt` or `dlsym`.
    pub via: String,
    /// The driver object that defines it.
    pub driver: String,
    /// The runtime's version when it could be found without a side effect
    /// inside the process; null: unknown (the CLI may look elsewhere, such
    /// as the object's package metadata).
    pub runtime_version: Option<String>,
    /// Where `runtime_version` comes from, or null.
    pub runtime_version_source: Option<String>,
    /// The object's file identity (as in `load`), for the CLI to look at
    /// the file later.
    pub realpath: Option<String>,
    pub dev: Option<u64>,
    pub ino: Option<u64>,
    pub size: Option<u64>,
    pub build_id: Option<String>,
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
    /// A note that events were lost (a full disk): how many since the last
    /// such note (docs/trace-format.md, "A full disk").
    #[serde(default)]
    pub lost: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_that_are_not_utf8_are_read_back() {
        let mut buf = Vec::new();
        let mut l = crate::json::Line::new(&mut buf);
        l.str("ev", "unload")
            .u64("seq", 1)
            .u64("t_ns", 1)
            .u64("pid", 1)
            .u64("ppid", 1)
            .u64("tid", 1)
            .bytes("path", b"/opt/caf\xc3\xa9/\xff\xfelib\\udcff.so")
            .i64("lmid", 0);
        l.finish();
        let text = String::from_utf8(buf).unwrap();
        let Ok(Event::Unload(u)) = parse_line(text.trim_end()) else {
            panic!("{text}")
        };
        assert_eq!(
            crate::escape::to_bytes(&u.path),
            b"/opt/caf\xc3\xa9/\xff\xfelib\\udcff.so"
        );
        // A pair, an escaped backslash and other escapes are JSON's.
        assert_eq!(
            decode_byte_escapes(r#""\ud83d\ude00\\udcff\u00e9""#),
            r#""\ud83d\ude00\\udcff\u00e9""#
        );
    }

    #[test]
    fn header_loss_fields_are_read_with_their_padding() {
        let h = r#"{"ev":"process","lost":143                 ,"lost_errno":28   ,"v":1,"shim":"0.1.0","pid":7,"ppid":1,"tid":7,"t_ns":1,"wall_ms":2,"exe":null,"argv":[],"hostname":null,"cwd":null,"env":{},"mode":"cuda","origin":"reopen","glibc":"2.31","calls":"needs-glibc-2.35","preload":true}"#;
        let Ok(Event::Process(p)) = parse_line(h) else {
            panic!("{h}")
        };
        assert_eq!((p.lost, p.lost_errno), (143, 28));
        assert_eq!(p.calls.as_deref(), Some("needs-glibc-2.35"));
        assert_eq!(p.origin, "reopen");
    }

    #[test]
    fn ld_library_path_now_is_absent_null_or_a_value() {
        let base = r#"{"ev":"load_failed","seq":2,"t_ns":5,"pid":1,"ppid":0,"tid":1,"name":"libcudnn.so.9","requester":"/p","via":"dlopen","mode":2,"lmid":0,"family":"cudnn","tried":[],"error":null,"errno":2,"dependency_failed":false"#;
        let now = |tail: &str| match parse_line(&format!("{base}{tail}}}")) {
            Ok(Event::LoadFailed(f)) => f.ld_library_path_now,
            other => panic!("{other:?}"),
        };
        assert_eq!(now(""), None);
        assert_eq!(now(r#","ld_library_path_now":null"#), Some(None));
        assert_eq!(
            now(r#","ld_library_path_now":"/a:/b","t_start_ns":3"#),
            Some(Some("/a:/b".to_string()))
        );
    }

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
        let c = r#"{"ev":"call","seq":4,"t_ns":5,"pid":1,"ppid":0,"tid":1,"fn":"cudnnGetVersion","lib":"/p/libcudnn.so.9","n":1,"via":"plt","status":null,"value":91900,"prop":null,"dur_ns":null}"#;
        assert!(
            matches!(parse_line(c), Ok(Event::Call(c)) if c.function == "cudnnGetVersion" && c.value == Some(91900))
        );
        let v = r#"{"ev":"version","seq":5,"t_ns":5,"pid":1,"ppid":0,"tid":1,"path":"/p/libcudnn_graph.so.9","family":"cudnn","source":"query","version":"9.19.0","raw":91900,"cuda_build":13000,"max_device":1210,"check":null,"core":null,"status":null,"driver_file":null}"#;
        assert!(matches!(parse_line(v), Ok(Event::Version(v)) if v.max_device == Some(1210)));
        let n = r#"{"ev":"call_counts","seq":6,"t_ns":5,"pid":1,"ppid":0,"tid":1,"at":"exit","counts":[{"fn":"cuInit","lib":"/d/libcuda.so.1","n":9}]}"#;
        assert!(matches!(parse_line(n), Ok(Event::CallCounts(c)) if c.counts[0].n == 9));
        assert!(matches!(
            parse_line(r#"{"ev":"unload","seq":"x"}"#),
            Err(LineError::BadFields { .. })
        ));
    }

    /// The straight path ([`parse_line_of_kind`], taken for the shim's
    /// layout) gives what the value path gives, for a header too, and
    /// every failure is the value path's own error.
    #[test]
    fn the_straight_path_and_the_value_path_agree() {
        let header = r#"{"ev":"process","lost":0        ,"lost_errno":0   ,"v":1,"shim":"0.1.0","pid":7,"ppid":1,"tid":7,"t_ns":1,"wall_ms":2,"exe":"/usr/bin/\udcff\u00e9","argv":["a","b"],"hostname":"h","cwd":"/","env":{"LD_LIBRARY_PATH":"/x"},"mode":"cuda","origin":"exec","glibc":"2.36","calls":"on","preload":true,"pin":{"dir":"/p","mode":"strict"}}"#;
        let unload = r#"{"ev":"unload","seq":3,"t_ns":5,"pid":1,"ppid":0,"tid":1,"path":"/x/libcudnn.so.9","lmid":0,"family":"cudnn"}"#;
        for line in [
            header,
            unload,
            // Wrong types, a missing field, an unknown kind, not JSON, not
            // closed, and a line whose layout is not the shim's.
            &header.replace(r#""pid":7"#, r#""pid":"7""#),
            &unload.replace(r#","lmid":0"#, ""),
            r#"{"ev":"future","x":1}"#,
            r#"{"ev":"load","seq":1"#,
            r#"{"ev":"unload"} trailing"#,
            r#"{"ev" :"unload","seq":3}"#,
            "[1,2]",
        ] {
            let straight = parse_line(line);
            let value = parse_value(line);
            assert_eq!(format!("{straight:?}"), format!("{value:?}"), "{line}");
        }
        // Every prefix of a good line, and each with one byte replaced by
        // a quote, a brace, a digit or a letter: whatever the straight path
        // makes of it, it is what the value path makes of it.
        for good in [header, unload] {
            for end in 0..=good.len() {
                let Some(cut) = good.get(..end) else { continue };
                assert_eq!(
                    format!("{:?}", parse_line(cut)),
                    format!("{:?}", parse_value(cut)),
                    "{cut}"
                );
            }
            for at in 0..good.len() {
                for b in ['"', '}', '7', 'x'] {
                    let mut line = good.to_string();
                    if !line.is_char_boundary(at) || !line.is_char_boundary(at + 1) {
                        continue;
                    }
                    line.replace_range(at..at + 1, &b.to_string());
                    assert_eq!(
                        format!("{:?}", parse_line(&line)),
                        format!("{:?}", parse_value(&line)),
                        "{line}"
                    );
                }
            }
        }
        let Ok(Event::Process(p)) = parse_line(header) else {
            panic!("{header}")
        };
        assert!(
            p.exe.as_deref().is_some_and(|e| e.ends_with('\u{e9}')),
            "{:?}",
            p.exe
        );
        assert_eq!(p.pin.as_ref().map(|p| p.mode.as_str()), Some("strict"));
    }
}
