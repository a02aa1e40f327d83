//! Fuzz inputs for the trace reader and `report` (issue 11): trace
//! directories made from arbitrary bytes, format-aware.
//!
//! [`TraceDir::arbitrary`] turns any byte string into a directory the way a
//! real one can be damaged: files named like a run's (`<pid>.jsonl`,
//! `<pid>.<n>.jsonl`, `launcher.json`, `stderr.txt`), lines that are real
//! events of every kind with values taken from hostile pools (control
//! characters, escape sequences, bidi overrides, bytes that are not UTF-8,
//! lone surrogate escapes, huge and negative numbers, deep nesting), events
//! whose fields are missing or of the wrong type, torn lines, the header's
//! padded loss fields, and raw byte soup. The same generator feeds the
//! bounded loop that runs in `cargo test` (`tests/fuzz_report.rs`, random
//! bytes) and a coverage-guided fuzzer for long runs (`fuzz/afl`, bytes
//! from AFL++): both only need stable Rust.

use arbitrary::{Arbitrary, Result, Unstructured};
use std::fmt::Write as _;
use std::path::Path;

/// A trace directory to write and then read with `report`.
#[derive(Debug)]
pub struct TraceDir {
    /// (file name, content)
    pub files: Vec<(String, Vec<u8>)>,
}

impl<'a> Arbitrary<'a> for TraceDir {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let n = u.int_in_range(1..=4)?;
        let mut files = Vec::new();
        let mut pids = Vec::new();
        for _ in 0..n {
            let pid = *u.choose(&[1u32, 2, 4242, 4243, u32::MAX, 0])?;
            pids.push(pid);
            let name = match u.int_in_range(0..=9)? {
                0 => format!("{pid}.1.jsonl"),
                1 => format!("{pid}.99999999999999999999.jsonl"),
                2 => format!("x{}.jsonl", nasty_text(u)?.replace('/', "_")),
                _ => format!("{pid}.jsonl"),
            };
            files.push((name, jsonl(u, pid, &pids)?));
        }
        if u.ratio(1, 3)? {
            files.push(("launcher.json".into(), launcher(u)?));
        }
        if u.ratio(1, 3)? {
            files.push(("stderr.txt".into(), bytes(u, 4096)?));
        }
        Ok(TraceDir { files })
    }
}

impl TraceDir {
    /// Writes the files into `dir` (created, emptied first).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        if dir.exists() {
            std::fs::remove_dir_all(dir)?;
        }
        std::fs::create_dir_all(dir)?;
        for (name, content) in &self.files {
            std::fs::write(dir.join(name), content)?;
        }
        Ok(())
    }
}

/// Text no terminal should get raw.
const NASTY: &[&str] = &[
    "\u{1b}[31mred\u{1b}[0m",
    "\u{1b}]0;title\u{7}",
    "a\nb",
    "\r\u{8}\u{7f}",
    "\u{202e}evil\u{202c}",
    "\u{2066}iso\u{2069}",
    "\u{200b}\u{feff}",
    "\u{85}\u{9b}2J",
    "libcudnn.so.9",
    "/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9.19.0",
    "/opt/données/モデル/libcudart.so.13",
    "",
    "\\",
    "\"",
    "%s%n",
];

/// JSON string bodies (already escaped) that readers must survive.
const RAW_JSON_STRINGS: &[&str] = &[
    "\\udcff\\udc80",
    "\\ud800",
    "\\udbff\\udfff",
    "\\u0000",
    "\\u001b[2J",
    "\\u202e",
    "a\\/b",
];

fn nasty_text(u: &mut Unstructured<'_>) -> Result<String> {
    let mut s = String::new();
    for _ in 0..u.int_in_range(1..=3)? {
        s.push_str(u.choose(NASTY)?);
    }
    Ok(s)
}

fn bytes(u: &mut Unstructured<'_>, max: usize) -> Result<Vec<u8>> {
    let n = u.int_in_range(0..=max)?;
    Ok(u.bytes(n.min(u.len()))?.to_vec())
}

/// A JSON string value: hostile text escaped properly, or a raw escape.
fn jstr(u: &mut Unstructured<'_>) -> Result<String> {
    if u.ratio(1, 5)? {
        return Ok(format!("\"{}\"", u.choose(RAW_JSON_STRINGS)?));
    }
    let s = nasty_text(u)?;
    Ok(serde_json::to_string(&s).unwrap_or_else(|_| "\"\"".into()))
}

/// A JSON number, or something else where a number belongs.
fn jnum(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(match u.int_in_range(0..=9)? {
        0 => "-1".into(),
        1 => "18446744073709551615".into(),
        2 => "1e400".into(),
        3 => "null".into(),
        4 => "\"7\"".into(),
        5 => "9223372036854775808".into(),
        _ => u.int_in_range(0..=100_000u64)?.to_string(),
    })
}

/// A value of any JSON type (bounded depth).
fn jany(u: &mut Unstructured<'_>, depth: u32) -> Result<String> {
    Ok(match u.int_in_range(0..=6)? {
        0 => jstr(u)?,
        1 => jnum(u)?,
        2 => "true".into(),
        3 => "null".into(),
        4 if depth < 4 => format!("[{}]", jany(u, depth + 1)?),
        5 if depth < 4 => format!("{{\"k\":{}}}", jany(u, depth + 1)?),
        _ => "[]".into(),
    })
}

const KINDS: &[&str] = &[
    "load",
    "load_failed",
    "unload",
    "dlerror",
    "note",
    "pin",
    "version",
    "call",
    "call_counts",
    "driver_client",
    "future_kind",
];

const FAMILIES: &[&str] = &["cudnn", "cudart", "cuda", "cublas", "nccl"];
const REASONS: &[&str] = &[
    "LD_LIBRARY_PATH",
    "RUNPATH",
    "RPATH",
    "ld.so.cache",
    "default-dir",
    "path",
    "already-loaded",
    "pin",
    "bogus",
];

/// One field of an event: mostly the right type, sometimes not.
fn field(u: &mut Unstructured<'_>, out: &mut String, key: &str, want: &str) -> Result<()> {
    if u.ratio(1, 12)? {
        return Ok(()); // missing
    }
    let v = if u.ratio(1, 10)? {
        jany(u, 0)?
    } else {
        match want {
            "str" => jstr(u)?,
            "path" => {
                let base = u.choose(NASTY)?;
                serde_json::to_string(&format!("/x/{base}")).unwrap_or_default()
            }
            "num" => jnum(u)?,
            "bool" => u.choose(&["true", "false"])?.to_string(),
            "family" => format!("\"{}\"", u.choose(FAMILIES)?),
            "reason" => format!("\"{}\"", u.choose(REASONS)?),
            "tried" => {
                let mut t = String::from("[");
                for i in 0..u.int_in_range(0..=3)? {
                    if i > 0 {
                        t.push(',');
                    }
                    let _ = write!(
                        t,
                        "{{\"path\":{},\"reason\":\"{}\",\"result\":\"{}\"}}",
                        jstr(u)?,
                        u.choose(REASONS)?,
                        u.choose(&["missing", "rejected", "used", "?"])?
                    );
                }
                t.push(']');
                t
            }
            _ => jany(u, 0)?,
        }
    };
    let _ = write!(out, ",\"{key}\":{v}");
    Ok(())
}

fn event(u: &mut Unstructured<'_>, pid: u32, seq: u64) -> Result<String> {
    let kind = *u.choose(KINDS)?;
    let mut l = format!("{{\"ev\":\"{kind}\",\"seq\":{seq},\"t_ns\":{seq}");
    let _ = write!(l, ",\"pid\":{pid},\"ppid\":1,\"tid\":{pid}");
    let fields: &[(&str, &str)] = match kind {
        "load" => &[
            ("name", "str"),
            ("path", "path"),
            ("realpath", "path"),
            ("reason", "reason"),
            ("reason_owner", "path"),
            ("search_dir", "path"),
            ("requester", "path"),
            ("via", "str"),
            ("mode", "num"),
            ("lmid", "num"),
            ("soname", "str"),
            ("dev", "num"),
            ("ino", "num"),
            ("size", "num"),
            ("build_id", "str"),
            ("family", "family"),
            ("stub", "bool"),
            ("tried", "tried"),
            ("new", "bool"),
        ],
        "load_failed" => &[
            ("name", "str"),
            ("requester", "path"),
            ("via", "str"),
            ("lmid", "num"),
            ("family", "family"),
            ("tried", "tried"),
            ("error", "str"),
            ("errno", "num"),
            ("fatal", "bool"),
            ("dependency_failed", "bool"),
        ],
        "unload" => &[("path", "path"), ("lmid", "num"), ("family", "family")],
        "dlerror" => &[("req", "num"), ("error", "str")],
        "note" => &[("level", "str"), ("msg", "str"), ("lost", "num")],
        "pin" => &[
            ("name", "str"),
            ("action", "str"),
            ("rule", "str"),
            ("to", "path"),
            ("dir", "path"),
            ("mode", "str"),
        ],
        "version" => &[
            ("path", "path"),
            ("family", "family"),
            ("source", "str"),
            ("version", "str"),
            ("raw", "num"),
            ("cuda_build", "num"),
            ("max_device", "num"),
            ("check", "num"),
        ],
        "call" => &[
            ("fn", "str"),
            ("lib", "path"),
            ("n", "num"),
            ("via", "str"),
            ("status", "num"),
            ("value", "num"),
            ("attr", "num"),
        ],
        "driver_client" => &[
            ("path", "path"),
            ("lmid", "num"),
            ("static_runtime", "bool"),
            ("fn", "str"),
            ("via", "str"),
            ("driver", "path"),
        ],
        _ => &[("x", "any")],
    };
    for (k, t) in fields {
        field(u, &mut l, k, t)?;
    }
    l.push('}');
    Ok(l)
}

fn header(u: &mut Unstructured<'_>, pid: u32, ppids: &[u32]) -> Result<String> {
    let ppid = *u.choose(ppids)?;
    let mut h = String::from("{\"ev\":\"process\"");
    if u.ratio(1, 2)? {
        let _ = write!(
            h,
            ",\"lost\":{:<20},\"lost_errno\":{:<5}",
            u.int_in_range(0..=5u64)?,
            u.choose(&[0, 28, 122])?
        );
    }
    let _ = write!(
        h,
        ",\"v\":{},\"shim\":\"0.1.0\",\"pid\":{pid},\"ppid\":{ppid},\"tid\":{pid},\"t_ns\":1,\"wall_ms\":{}",
        u.choose(&[1, 1, 1, 2, 0])?,
        jnum(u)?
    );
    for (k, t) in [
        ("exe", "path"),
        ("argv", "any"),
        ("cwd", "path"),
        ("hostname", "str"),
        ("mode", "str"),
        ("origin", "str"),
        ("glibc", "str"),
        ("calls", "str"),
        ("preload", "bool"),
    ] {
        field(u, &mut h, k, t)?;
    }
    if u.ratio(1, 3)? {
        let _ = write!(h, ",\"argv\":[{},{}]", jstr(u)?, jstr(u)?);
    }
    if u.ratio(1, 4)? {
        let _ = write!(h, ",\"pin\":{{\"dir\":{},\"mode\":\"strict\"}}", jstr(u)?);
    }
    h.push('}');
    Ok(h)
}

fn jsonl(u: &mut Unstructured<'_>, pid: u32, pids: &[u32]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    if !u.ratio(1, 10)? {
        out.extend_from_slice(header(u, pid, pids)?.as_bytes());
        out.push(b'\n');
    }
    let lines = u.int_in_range(0..=12)?;
    for seq in 1..=lines {
        match u.int_in_range(0..=19)? {
            0 => out.extend_from_slice(&bytes(u, 64)?),
            1 => {
                // A torn line: an event cut anywhere.
                let e = event(u, pid, seq)?;
                let cut = u.int_in_range(0..=e.len())?;
                out.extend_from_slice(&e.as_bytes()[..cut]);
            }
            2 => out.extend_from_slice(b""),
            3 => {
                let e = event(u, pid, seq)?;
                out.extend_from_slice(e.repeat(2).as_bytes());
            }
            _ => out.extend_from_slice(event(u, pid, seq)?.as_bytes()),
        }
        out.push(b'\n');
    }
    Ok(out)
}

fn launcher(u: &mut Unstructured<'_>) -> Result<Vec<u8>> {
    if u.ratio(1, 4)? {
        return bytes(u, 256);
    }
    let mut l = String::from("{\"v\":1");
    for (k, t) in [
        ("argv", "any"),
        ("pid", "num"),
        ("exit_code", "num"),
        ("signal", "any"),
        ("stderr", "any"),
        ("warnings", "any"),
        ("pin", "any"),
    ] {
        field(u, &mut l, k, t)?;
    }
    l.push('}');
    Ok(l.into_bytes())
}

/// Reads `dir` through the report pipeline in this process
/// (`cudnn_trace_core::pipeline::Report`, what `report` runs): the text
/// summary, the findings, the problems and the JSON document. Why the
/// output is wrong, if it is; a panic is the caller's to catch.
pub fn report_in_process(dir: &Path) -> std::result::Result<(), String> {
    use cudnn_trace_core::pipeline::Report;
    use cudnn_trace_core::render::summary::TextOptions;
    let report = Report::read(&[dir.to_path_buf()]);
    // No colour: what is checked is that nothing from the traces reaches
    // the terminal as a control; wrapped, as on a terminal.
    let opts = TextOptions {
        all: true,
        location: vec![dir.display().to_string()],
        prefix: None,
        color: false,
        width: Some(100),
        each: false,
    };
    let text = format!(
        "{}{}{}",
        report.problems_text(),
        report.summary_text(&opts),
        report.findings_text(&opts)
    );
    if let Some(bad) = unsafe_for_terminal(text.as_bytes()) {
        return Err(format!("the text printed {bad}:\n{text}"));
    }
    let json = report.json(true).map_err(|e| format!("no JSON: {e}"))?;
    if let Some(bad) = unsafe_for_terminal(json.as_bytes()) {
        return Err(format!("the JSON printed {bad}:\n{json}"));
    }
    let decoded = cudnn_trace_format::read::decode_byte_escapes(&json);
    serde_json::from_str::<serde_json::Value>(&decoded)
        .map_err(|e| format!("the JSON does not parse ({e}):\n{json}"))?;
    Ok(())
}

/// What a terminal must never get from `report`: escape sequences and
/// other control characters (but newline and tab), C1 controls, and the
/// bidi / invisible characters `cudnn_trace_format::escape` escapes.
pub fn unsafe_for_terminal(text: &[u8]) -> Option<String> {
    let s = String::from_utf8_lossy(text);
    s.char_indices()
        .find(|&(_, c)| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(
                    c,
                    '\u{061c}'
                        | '\u{200b}'..='\u{200f}'
                        | '\u{202a}'..='\u{202e}'
                        | '\u{2060}'..='\u{2064}'
                        | '\u{2066}'..='\u{2069}'
                        | '\u{feff}'
                )
        })
        .map(|(i, c)| {
            let from = s[..i].char_indices().rev().nth(40).map_or(0, |(j, _)| j);
            format!("U+{:04X} after {:?}", c as u32, &s[from..i])
        })
}
