//! The `call`, `call-count` and `version` directives of `scenario.env`
//! (docs/versions-and-calls.md).
//!
//! | directive | meaning |
//! |---|---|
//! | `call FN key=value…` | a `call` event for function FN matches every key: `lib` (path), `via`, `n`, `status`, `value`, `prop`, `attr`, `device`, `origin` (`exec` or `fork`: the `origin` of the process header, to tell a forked child's events) |
//! | `call-count FN n=N [lib=PATH]` | FN (in that library) was called N times: N `call` events when N ≤ 4, else 4 events and a `call_counts` entry of N (0: neither) |
//! | `version PATH key=value…` | a `version` event for PATH matches every key: `source`, `version`, `raw`, `cuda_build`, `max_device`, `check`, `core` (path), `status`, `driver_file`, `asked_by` |
//! | `event KIND key=value…` | some event of kind KIND (`load`, `load_failed`, `driver_client`, …) has every key: any top-level field; the fields that hold paths (see [`PATH_KEYS`]) are compared as paths |
//! | `no-event KIND key=value…` | no event of kind KIND has every key |
//!
//! A value `null` matches a JSON null. Paths are relative to the build dir
//! unless absolute, compared as written (as for `expect`).

use crate::check::{abs, show, Outcome};
use crate::run::Built;
use crate::spec::Expect;
use crate::trace::ProcessTrace;
use serde_json::Value;
use std::path::Path;

/// Events recorded per function and library before calls are only counted
/// (`cudnn_trace_format::CALLS_RECORDED`).
const RECORDED: u64 = cudnn_trace_format::CALLS_RECORDED;

/// Parses the rest of a `call`, `call-count` or `version` line.
pub fn parse(dir: &str, rest: &str, line: &str) -> Result<Expect, String> {
    let mut words = rest.split_whitespace();
    let first = words
        .next()
        .ok_or_else(|| format!("{dir} needs a function name or path"))?;
    let allowed: &[&str] = match dir {
        "call" => &[
            "lib", "via", "n", "status", "value", "prop", "attr", "device", "origin",
        ],
        "call-count" => &["lib", "n"],
        _ => &[
            "source",
            "version",
            "raw",
            "cuda_build",
            "max_device",
            "check",
            "core",
            "status",
            "driver_file",
            "asked_by",
        ],
    };
    let mut e = Expect {
        path: Some(first.to_string()),
        keys: vec![],
        line: line.to_string(),
    };
    for w in words {
        let (k, v) = w
            .split_once('=')
            .ok_or_else(|| "expected key=value".to_string())?;
        if !allowed.contains(&k) {
            return Err(format!("unknown {dir} key {k:?}"));
        }
        e.keys.push((k.to_string(), v.to_string()));
    }
    if dir == "call-count" && e.get("n").is_none_or(|n| n.parse::<u64>().is_err()) {
        return Err("call-count needs n=NUMBER".into());
    }
    Ok(e)
}

/// Fields of any event that hold a path (compared with [`abs`]).
pub const PATH_KEYS: &[&str] = &[
    "path",
    "lib",
    "core",
    "requester",
    "reason_owner",
    "search_dir",
    "search_entry",
    "realpath",
    "driver",
    "to",
];

/// Parses the rest of an `event` / `no-event` line: `KIND key=value…`
/// (the kind goes into `path`).
pub fn parse_event(rest: &str, line: &str) -> Result<Expect, String> {
    let mut words = rest.split_whitespace();
    let kind = words.next().ok_or("event needs an event kind")?;
    let mut e = Expect {
        path: Some(kind.to_string()),
        keys: vec![],
        line: line.to_string(),
    };
    for w in words {
        let (k, v) = w
            .split_once('=')
            .ok_or_else(|| "expected key=value".to_string())?;
        e.keys.push((k.to_string(), v.to_string()));
    }
    if e.keys.is_empty() {
        return Err("event needs at least one key=value".into());
    }
    Ok(e)
}

fn of_kind<'a>(traces: &'a [ProcessTrace], kind: &str) -> Vec<&'a Value> {
    traces
        .iter()
        .flat_map(|t| t.values.iter())
        .filter(|v| v.get("ev").and_then(Value::as_str) == Some(kind))
        .collect()
}

/// `call` events with the `origin` of their process header.
fn calls_with_origin(traces: &[ProcessTrace]) -> Vec<(String, &Value)> {
    traces
        .iter()
        .flat_map(|t| {
            let origin = t
                .header
                .as_ref()
                .map(|h| h.origin.clone())
                .unwrap_or_default();
            t.values
                .iter()
                .filter(|v| v.get("ev").and_then(Value::as_str) == Some("call"))
                .map(move |v| (origin.clone(), v))
        })
        .collect()
}

/// Whether field `k` of `v` is what `want` says (`null`, a path, a number or
/// a string).
fn field_is(v: &Value, k: &str, want: &str, path_key: bool, b: &Path) -> bool {
    let got = v.get(k).unwrap_or(&Value::Null);
    match got {
        Value::Null => want == "null",
        Value::String(s) if path_key => abs(s, b) == abs(want, b),
        Value::String(s) => s == want,
        Value::Number(n) => n.to_string() == want,
        Value::Bool(x) => x.to_string() == want,
        _ => false,
    }
}

fn matches(v: &Value, keys: &[(String, String)], paths: &[&str], b: &Path) -> bool {
    keys.iter()
        .all(|(k, want)| field_is(v, k, want, paths.contains(&k.as_str()), b))
}

fn brief(v: &Value, b: &Path) -> String {
    let s = v.to_string();
    let bs = b.display().to_string();
    s.replace(&bs, "{B}")
}

/// Checks the scenario's `call`, `call-count` and `version` directives
/// against the trace of one run.
pub fn check(built: &Built, traces: &[ProcessTrace], o: &mut Outcome) {
    let spec = &built.spec;
    let off = calls_off_by_glibc(built, traces, o);
    check_events(built, traces, o, off);
    if off {
        return;
    }
    if spec.calls.is_empty() && spec.call_counts.is_empty() && spec.versions.is_empty() {
        return;
    }
    let b = &built.build;
    let calls = of_kind(traces, "call");
    let counts = of_kind(traces, "call_counts");
    let versions = of_kind(traces, "version");
    let list = |vs: &[&Value]| {
        vs.iter()
            .map(|v| format!("  {}", brief(v, b)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let with_origin = calls_with_origin(traces);
    for e in &spec.calls {
        let f = e.path.as_deref().unwrap_or_default();
        let of_fn: Vec<(&str, &Value)> = with_origin
            .iter()
            .map(|(o, v)| (o.as_str(), *v))
            .filter(|(_, v)| v.get("fn").and_then(Value::as_str) == Some(f))
            .collect();
        let keys: Vec<(String, String)> = e
            .keys
            .iter()
            .filter(|(k, _)| k != "origin")
            .cloned()
            .collect();
        let found = of_fn.iter().any(|(origin, v)| {
            e.get("origin").is_none_or(|want| want == *origin) && matches(v, &keys, &["lib"], b)
        });
        let of_fn: Vec<&Value> = of_fn.into_iter().map(|(_, v)| v).collect();
        if !found {
            o.failures.push(format!(
                "`{}`: no matching call event; calls of {f}:\n{}",
                e.line,
                list(&of_fn)
            ));
        }
    }
    for e in &spec.call_counts {
        let f = e.path.as_deref().unwrap_or_default();
        let want: u64 = e.get("n").and_then(|n| n.parse().ok()).unwrap_or(0);
        let lib = e.get("lib").map(|l| abs(l, b));
        let lib_ok = |v: &Value| {
            lib.as_ref().is_none_or(|l| {
                v.get("lib")
                    .and_then(Value::as_str)
                    .is_some_and(|x| abs(x, b) == *l)
            })
        };
        let events: Vec<&Value> = calls
            .iter()
            .copied()
            .filter(|v| v.get("fn").and_then(Value::as_str) == Some(f) && lib_ok(v))
            .collect();
        let totals: Vec<u64> = counts
            .iter()
            .filter_map(|v| v.get("counts").and_then(Value::as_array))
            .flatten()
            .filter(|c| c.get("fn").and_then(Value::as_str) == Some(f) && lib_ok(c))
            .filter_map(|c| c.get("n").and_then(Value::as_u64))
            .collect();
        let total = if totals.is_empty() {
            events.len() as u64
        } else {
            totals.iter().sum()
        };
        let ok = events.len() as u64 == want.min(RECORDED)
            && total == want
            && (want > RECORDED || totals.is_empty());
        if !ok {
            o.failures.push(format!(
                "`{}`: {} call event(s) and call_counts totals {totals:?} (want {} event(s), total {want}); events:\n{}",
                e.line,
                events.len(),
                want.min(RECORDED),
                list(&events)
            ));
        }
    }
    for e in &spec.versions {
        let p = abs(e.path.as_deref().unwrap_or_default(), b);
        let of_path: Vec<&Value> = versions
            .iter()
            .copied()
            .filter(|v| {
                v.get("path")
                    .and_then(Value::as_str)
                    .is_some_and(|x| abs(x, b) == p)
            })
            .collect();
        if !of_path.iter().any(|v| matches(v, &e.keys, &["core"], b)) {
            o.failures.push(format!(
                "`{}`: no matching version event; version events of {}:\n{}\nall version events:\n{}",
                e.line,
                show(&p, b),
                list(&of_path),
                list(&versions)
            ));
        }
    }
}

/// The `event` and `no-event` directives.
/// Directives that need the shim's calls (and in-library versions): glibc
/// 2.35 or later (docs/glibc.md). Below, they are replaced by the check
/// that every process header says so (`calls: "needs-glibc-2.35"`, the
/// degrade the CLI reports), and the scenario's other checks run as usual.
/// True when they were replaced.
fn calls_off_by_glibc(built: &Built, traces: &[ProcessTrace], o: &mut Outcome) -> bool {
    if crate::spec::glibc_version() >= (2, 35) {
        return false;
    }
    let spec = &built.spec;
    let needs_calls = !spec.calls.is_empty()
        || !spec.call_counts.is_empty()
        || spec
            .versions
            .iter()
            .any(|e| e.get("source") == Some("query"))
        || spec
            .events
            .iter()
            .any(|(_, e)| e.path.as_deref() == Some("driver_client"));
    if !needs_calls {
        return false;
    }
    for t in traces {
        let calls = t.header.as_ref().and_then(|h| h.calls.as_deref());
        if calls != Some("needs-glibc-2.35") {
            o.failures.push(format!(
                "{}: glibc {} records no calls, and the header must say so: calls = {calls:?}",
                t.file.display(),
                crate::spec::glibc_version_text()
            ));
        }
    }
    o.info.push(format!(
        "glibc {}: call, version (query) and driver_client directives replaced by the header's calls field",
        crate::spec::glibc_version_text()
    ));
    true
}

/// `calls_off`: skip the events only call recording makes.
fn check_events(built: &Built, traces: &[ProcessTrace], o: &mut Outcome, calls_off: bool) {
    let b = &built.build;
    for (want, e) in &built.spec.events {
        let kind = e.path.as_deref().unwrap_or_default();
        if calls_off && matches!(kind, "driver_client" | "call" | "call_counts" | "version") {
            continue;
        }
        let all = of_kind(traces, kind);
        let hits: Vec<&Value> = all
            .iter()
            .copied()
            .filter(|v| matches(v, &e.keys, PATH_KEYS, b))
            .collect();
        let list = |vs: &[&Value]| {
            vs.iter()
                .map(|v| format!("  {}", brief(v, b)))
                .collect::<Vec<_>>()
                .join("\n")
        };
        if *want && hits.is_empty() {
            o.failures.push(format!(
                "`{}`: no matching {kind} event; {kind} events:\n{}",
                e.line,
                list(&all)
            ));
        }
        if !*want && !hits.is_empty() {
            o.failures
                .push(format!("`{}`: but the trace has:\n{}", e.line, list(&hits)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_matches() {
        let e = parse(
            "call",
            "cudnnGetVersion lib=pip/libcudnn.so.9 value=91900 via=plt",
            "call …",
        )
        .unwrap();
        let b = Path::new("/b");
        let v: Value = serde_json::from_str(
            r#"{"ev":"call","fn":"cudnnGetVersion","lib":"/b/pip/libcudnn.so.9","n":1,"via":"plt","status":null,"value":91900}"#,
        )
        .unwrap();
        assert!(matches(&v, &e.keys, &["lib"], b));
        let e = parse("call", "cudnnGetVersion status=null n=2", "").unwrap();
        assert!(!matches(&v, &e.keys, &["lib"], b));
        assert!(parse("call", "cuInit color=red", "").is_err());
        assert!(parse("call-count", "cuInit", "").is_err());
        assert!(parse("version", "lib/x.so check=0 core=lib/y.so", "").is_ok());
        let e = parse_event("load path=x/libcudnn.so.9 stub=true", "").unwrap();
        let v: Value =
            serde_json::from_str(r#"{"ev":"load","path":"/b/x/libcudnn.so.9","stub":true}"#)
                .unwrap();
        assert!(matches(&v, &e.keys, PATH_KEYS, b));
        assert!(parse_event("load", "").is_err());
    }
}
