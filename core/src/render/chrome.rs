//! `report --format chrome`: the traces as Chrome Trace Event JSON, the
//! format Perfetto (ui.perfetto.dev) and `chrome://tracing` open, laid
//! out so that it overlays a PyTorch profiler trace of the same processes.
//! `docs/output.md` documents the structure, `docs/compare.md` the clock.
//!
//! * One track per process (`pid`) and thread (`tid`); `M` events name
//!   each process (`process_name`: program, pid, rank, host; Perfetto shows
//!   only this), label it (`process_labels`, chrome://tracing) and order
//!   processes by rank (`process_sort_index`).
//! * Loads, failed loads, pin decisions, version answers, unloads, notes
//!   and calls without a duration are instants (`i`, thread scope) at the
//!   moment the shim recorded them; calls with a duration (`cudnnCreate`,
//!   `cuInit`) are complete slices (`X`, `dur`). A load has no start in
//!   the trace today (the shim sees the object once it is mapped), so it
//!   is an instant, not a slice.
//! * Findings are process-scoped instants (`s: "p"`) at the time of their
//!   latest evidence event.
//! * Time: `ts` is wall-clock (CLOCK_REALTIME) microseconds since
//!   `baseTimeNanoseconds`, which is chosen with Kineto's rule (the wall
//!   clock floored to a multiple of 7,889,238 s), so a file made the same
//!   quarter as a PyTorch profiler trace has the same base and its `ts`
//!   line up as they are. Each event's wall-clock time is its monotonic
//!   `t_ns` plus the process's offset from the header (`wall_ms` taken
//!   with `t_ns`; ±0.5 ms).
//! * Several hosts: pids of different hosts would collide in the one pid
//!   space of a JSON trace, so each is written `host_index << 22 | pid`
//!   (Linux pids stay below 2^22), the real pid in the name and the args.
//!
//! Timestamps are written with integer arithmetic (`{us}.{ns:03}`), never
//! through a float, so they keep nanoseconds.

use crate::analysis::{compare, Diagnosis, Finding};
use crate::model::{basename, Image, TraceSet};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// Kineto's base period: about three months, in seconds
/// (`libkineto/src/output_json.h`, `_trimonths`).
pub const BASE_PERIOD_S: u64 = 7_889_238;

/// How the wall-clock offset of each process is known, for `otherData`.
pub const CLOCK_SOURCE: &str = "header wall_ms (millisecond wall clock taken with the header's monotonic t_ns; offset centred, error +-0.5 ms)";

/// Options of the Chrome rendering.
#[derive(Debug, Clone, Default)]
pub struct ChromeOptions {
    /// The base to use (`--align-to TRACE`: another trace's
    /// `baseTimeNanoseconds`) instead of Kineto's rule.
    pub base_ns: Option<u64>,
}

/// Kineto's base for a wall-clock time: floored to [`BASE_PERIOD_S`].
pub fn kineto_base(wall_ns: u64) -> u64 {
    let period = BASE_PERIOD_S * 1_000_000_000;
    wall_ns / period * period
}

/// The `baseTimeNanoseconds` of a Chrome trace file (a PyTorch profiler
/// export), for `--align-to`. Kineto writes it before `traceEvents`, so
/// the first MiB is searched first, then the whole file.
pub fn base_of(path: &std::path::Path) -> Result<u64, String> {
    let find = |bytes: &[u8]| -> Option<u64> {
        let key = b"\"baseTimeNanoseconds\"";
        let i = bytes.windows(key.len()).position(|w| w == key)? + key.len();
        let rest = &bytes[i..];
        let rest = &rest[rest
            .iter()
            .position(|c| !c.is_ascii_whitespace() && *c != b':')?..];
        let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        std::str::from_utf8(&rest[..n]).ok()?.parse().ok()
    };
    for cap in [1u64 << 20, 4u64 << 30] {
        let (bytes, more) =
            crate::model::files::read_regular(path, cap).map_err(|e| e.to_string())?;
        if bytes.starts_with(&[0x1f, 0x8b]) {
            return Err("a gzip file: gunzip it first".into());
        }
        if let Some(b) = find(&bytes) {
            return Ok(b);
        }
        if !more {
            break;
        }
    }
    Err("no baseTimeNanoseconds in it (not a PyTorch profiler trace?)".into())
}

/// Microseconds with three decimals, from nanoseconds.
pub fn fmt_us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// The offset that turns one image's monotonic `t_ns` into wall-clock ns:
/// `wall_ms` is the wall clock truncated to the millisecond when the
/// header's `t_ns` was taken, so its middle (+0.5 ms) is the best guess.
fn offset_ns(img: &Image) -> i128 {
    img.header.wall_ms as i128 * 1_000_000 + 500_000 - img.header.t_ns as i128
}

/// The Chrome Trace Event document of a trace set, as compact JSON.
pub fn render(set: &TraceSet, diagnosis: &Diagnosis, opts: &ChromeOptions) -> String {
    let first_wall = set
        .images
        .iter()
        .map(|i| (i.header.t_ns as i128 + offset_ns(i)).max(0) as u64)
        .min()
        .unwrap_or(0);
    let base = opts.base_ns.unwrap_or_else(|| kineto_base(first_wall));
    let pids = PidMap::new(&set.images);
    let mut w = Writer {
        out: String::with_capacity(1 << 16),
        first: true,
        base,
        dropped: 0,
    };
    for (i, img) in set.images.iter().enumerate() {
        let findings = diagnosis
            .images
            .get(i)
            .map(|f| f.findings.as_slice())
            .unwrap_or(&[]);
        image_events(&mut w, img, &pids, findings, opts.base_ns.is_some());
    }
    let hosts: Vec<&str> = pids.hosts.iter().map(String::as_str).collect();
    let other = json!({
        "tool": format!("cudnn-trace {}", env!("CARGO_PKG_VERSION")),
        "clock": "ts: CLOCK_REALTIME microseconds since baseTimeNanoseconds (Unix epoch ns)",
        "base_rule": if opts.base_ns.is_some() { "--align-to" } else { "kineto: wall clock floored to 7889238 s" },
        "clock_source": CLOCK_SOURCE,
        "pid_rule": if pids.remapped { "host_index << 22 | pid (several hosts)" } else { "the real pid and tid" },
        "hosts": hosts,
        "processes": set.images.len(),
        "dropped_before_base": w.dropped,
    });
    let meta = json!({
        "tool": "cudnn-trace",
        "tool_version": env!("CARGO_PKG_VERSION"),
        "clock_domain": "REALTIME",
        "hosts": hosts.len(),
        "processes": set.images.len(),
    });
    let name = set
        .sources
        .first()
        .map(|p| format!("cudnn-trace {}", p.display()))
        .unwrap_or_else(|| "cudnn-trace".into());
    format!(
        "{{\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":{base},\"traceName\":{},\"otherData\":{other},\"metadata\":{meta},\"traceEvents\":[{}\n]}}\n",
        Value::from(name),
        w.out
    )
}

/// Track numbers: the real pids and tids on one host; `host_index << 22 |
/// id` across hosts (up to 1024 hosts fit in 32 bits), densely numbered
/// beyond.
struct PidMap {
    hosts: Vec<String>,
    remapped: bool,
    dense: HashMap<(usize, u32), u32>,
}

impl PidMap {
    fn new(images: &[Image]) -> PidMap {
        let mut hosts: Vec<String> = images.iter().map(|i| i.host().to_string()).collect();
        hosts.sort();
        hosts.dedup();
        let remapped = hosts.len() > 1;
        let mut dense = HashMap::new();
        if hosts.len() > 1024 {
            for img in images {
                let h = hosts
                    .binary_search_by(|x| x.as_str().cmp(img.host()))
                    .unwrap_or(0);
                let ids = std::iter::once(img.header.pid).chain(all_tids(img));
                for id in ids {
                    let n = dense.len() as u32 + 1;
                    dense.entry((h, id)).or_insert(n);
                }
            }
        }
        PidMap {
            hosts,
            remapped,
            dense,
        }
    }

    fn map(&self, host: &str, id: u32) -> u32 {
        if !self.remapped {
            return id;
        }
        let h = self
            .hosts
            .binary_search_by(|x| x.as_str().cmp(host))
            .unwrap_or(0);
        if self.dense.is_empty() {
            (h as u32) << 22 | (id & ((1 << 22) - 1))
        } else {
            self.dense.get(&(h, id)).copied().unwrap_or(0)
        }
    }
}

fn all_tids(img: &Image) -> impl Iterator<Item = u32> + '_ {
    img.loads
        .iter()
        .map(|l| l.tid)
        .chain(img.failed.iter().map(|f| f.ev.tid))
        .chain(img.calls.iter().map(|c| c.tid))
        .chain(std::iter::once(img.header.tid))
}

/// The events being written.
struct Writer {
    out: String,
    first: bool,
    base: u64,
    /// Events before the base (only with `--align-to` a later trace).
    dropped: usize,
}

impl Writer {
    fn raw(&mut self, event: &str) {
        self.out.push_str(if self.first { "\n" } else { ",\n" });
        self.first = false;
        self.out.push_str(event);
    }

    /// ts of a wall-clock time, None (counted) before the base.
    fn ts(&mut self, wall: i128) -> Option<u64> {
        let d = wall - self.base as i128;
        if d < 0 {
            self.dropped += 1;
            return None;
        }
        Some(d as u64)
    }

    fn meta(&mut self, pid: u32, name: &str, args: Value) {
        let e = json!({"ph": "M", "name": name, "pid": pid, "tid": 0, "args": args});
        self.raw(&e.to_string());
    }

    /// An event at `wall` (ns) on thread `tid`: `i` with scope `s`, or `X`
    /// lasting `dur` ns.
    #[allow(clippy::too_many_arguments)]
    fn event(
        &mut self,
        ph: &str,
        scope: Option<&str>,
        cat: &str,
        name: &str,
        pid: u32,
        tid: u32,
        wall: i128,
        dur: Option<u64>,
        args: Value,
    ) {
        let Some(ts) = self.ts(wall) else { return };
        let mut e = String::with_capacity(256);
        let _ = write!(
            e,
            "{{\"ph\":\"{ph}\",\"cat\":{},\"name\":{},\"pid\":{pid},\"tid\":{tid},\"ts\":{}",
            Value::from(cat),
            Value::from(name),
            fmt_us(ts)
        );
        if let Some(s) = scope {
            let _ = write!(e, ",\"s\":\"{s}\"");
        }
        if let Some(d) = dur {
            let _ = write!(e, ",\"dur\":{}", fmt_us(d));
        }
        let _ = write!(e, ",\"args\":{args}}}");
        self.raw(&e);
    }
}

/// `python train.py (pid 4242, rank 3, node07)`.
fn process_name(img: &Image, several_hosts: bool) -> String {
    let role = compare::role(&img.header.argv, img.header.exe.as_deref());
    let short: String = role.split(' ').take(3).collect::<Vec<_>>().join(" ");
    let mut s = format!("{short} (pid {}", img.header.pid);
    if let Some((_, r)) = compare::rank(img) {
        let _ = write!(s, ", rank {r}");
    }
    if several_hosts || img.host().is_empty() {
        if !img.host().is_empty() {
            let _ = write!(s, ", {}", img.host());
        }
    } else {
        let _ = write!(s, ", {}", img.host());
    }
    s + ")"
}

fn image_events(w: &mut Writer, img: &Image, pids: &PidMap, findings: &[Finding], aligned: bool) {
    let host = img.host();
    let pid = pids.map(host, img.header.pid);
    let tid = |t: u32| pids.map(host, t);
    let off = offset_ns(img);
    let at = |t_ns: u64| t_ns as i128 + off;
    w.meta(
        pid,
        "process_name",
        json!({"name": process_name(img, pids.remapped)}),
    );
    let mut labels = vec![format!("host={host}")];
    for (k, v) in &img.header.env {
        if compare::RANK_VARS.contains(&k.as_str())
            || compare::LOCAL_RANK_VARS.contains(&k.as_str())
        {
            labels.push(format!("{k}={v}"));
        }
    }
    w.meta(pid, "process_labels", json!({"labels": labels.join(",")}));
    // Kineto sets its own sort index (the pid): under --align-to the
    // two would fight, so ours is left out there.
    if let (false, Some(r)) = (
        aligned,
        compare::rank(img).and_then(|(_, r)| r.parse::<u64>().ok()),
    ) {
        w.meta(pid, "process_sort_index", json!({"sort_index": r}));
    }
    let h = &img.header;
    w.event("i", Some("t"), "cudnn-trace,process", &format!("process start ({})", h.origin), pid, tid(h.tid), at(h.t_ns), None, json!({
        "argv": h.argv, "exe": h.exe, "cwd": h.cwd, "host": host, "real_pid": h.pid, "ppid": h.ppid,
        "glibc": h.glibc, "mode": h.mode, "env": h.env, "file": img.file.display().to_string(),
    }));
    for l in &img.loads {
        let short = l
            .name
            .as_deref()
            .map(basename)
            .unwrap_or_else(|| basename(&l.path));
        let (name, cat) = if l.new {
            (format!("load {short}"), "cudnn-trace,load")
        } else {
            (
                format!("dlopen {short} (already loaded)"),
                "cudnn-trace,load",
            )
        };
        let args = json!({"seq": l.seq, "name": l.name, "path": l.path, "realpath": l.realpath,
            "reason": l.reason, "search_dir": l.search_dir, "requester": l.requester, "via": l.via,
            "soname": l.soname, "build_id": l.build_id, "family": l.family, "new": l.new,
            "tried": l.tried.iter().map(|t| json!([t.path, t.reason, t.result])).collect::<Vec<_>>()});
        // A load whose search start is known is a slice from the start of
        // the loader's search to the object's mapping; else an instant.
        let (ph, scope, t, dur) = span(l.t_start_ns, l.t_ns);
        w.event(ph, scope, cat, &name, pid, tid(l.tid), at(t), dur, args);
    }
    for f in &img.failed {
        let e = &f.ev;
        let args = json!({"seq": e.seq, "name": e.name, "requester": e.requester, "via": e.via,
            "family": e.family, "errors": f.errors(), "errno": e.errno, "fatal": e.fatal,
            "dependency_failed": e.dependency_failed,
            "tried": e.tried.iter().map(|t| json!([t.path, t.reason, t.result])).collect::<Vec<_>>()});
        let name = format!("load failed: {}", basename(&f.ev.name));
        let (ph, scope, t, dur) = span(e.t_start_ns, e.t_ns);
        w.event(
            ph,
            scope,
            "cudnn-trace,load_failed",
            &name,
            pid,
            tid(e.tid),
            at(t),
            dur,
            args,
        );
    }
    for p in &img.pins {
        let name = format!("pin: {} {}", p.action, basename(&p.name));
        w.event("i", Some("t"), "cudnn-trace,pin", &name, pid, tid(p.tid), at(p.t_ns), None, json!({"seq": p.seq, "name": p.name, "action": p.action, "rule": p.rule, "to": p.to, "dir": p.dir, "mode": p.mode}));
    }
    for v in &img.versions {
        let name = format!(
            "version {} {} ({})",
            v.family.as_deref().unwrap_or("?"),
            v.version.as_deref().unwrap_or("?"),
            v.source
        );
        w.event("i", Some("t"), "cudnn-trace,version", &name, pid, tid(v.tid), at(v.t_ns), None, json!({"seq": v.seq, "path": v.path, "family": v.family, "source": v.source, "version": v.version, "raw": v.raw, "cuda_build": v.cuda_build}));
    }
    for c in &img.calls {
        let args = json!({"seq": c.seq, "lib": c.lib, "n": c.n, "via": c.via, "status": c.status, "value": c.value, "dur_ns": c.dur_ns});
        match c.dur_ns {
            Some(d) => w.event(
                "X",
                None,
                "cudnn-trace,call",
                &c.function,
                pid,
                tid(c.tid),
                at(c.t_ns.saturating_sub(d)),
                Some(d),
                args,
            ),
            None => w.event(
                "i",
                Some("t"),
                "cudnn-trace,call",
                &c.function,
                pid,
                tid(c.tid),
                at(c.t_ns),
                None,
                args,
            ),
        }
    }
    for u in &img.unloads {
        let name = format!("unload {}", basename(&u.path));
        w.event(
            "i",
            Some("t"),
            "cudnn-trace,unload",
            &name,
            pid,
            tid(u.tid),
            at(u.t_ns),
            None,
            json!({"seq": u.seq, "path": u.path, "family": u.family}),
        );
    }
    for n in &img.notes {
        let name = format!(
            "note ({}): {}",
            n.level,
            n.msg.chars().take(80).collect::<String>()
        );
        w.event(
            "i",
            Some("t"),
            "cudnn-trace,note",
            &name,
            pid,
            tid(n.tid),
            at(n.t_ns),
            None,
            json!({"seq": n.seq, "level": n.level, "msg": n.msg}),
        );
    }
    for c in &img.call_counts {
        let name = format!("call counts ({})", c.at);
        w.event("i", Some("t"), "cudnn-trace,call_counts", &name, pid, tid(c.tid), at(c.t_ns), None, json!({"seq": c.seq, "at": c.at, "counts": c.counts.iter().map(|x| json!([x.function, x.lib, x.n])).collect::<Vec<_>>()}));
    }
    finding_events(w, img, findings, pid, tid(h.tid), off);
}

/// Each finding as a process-scoped instant at its latest evidence event
/// (else at the process's last event).
fn finding_events(
    w: &mut Writer,
    img: &Image,
    findings: &[Finding],
    pid: u32,
    tid: u32,
    off: i128,
) {
    let times = seq_times(img);
    let last = times.values().copied().max().unwrap_or(img.header.t_ns);
    for f in findings {
        let t = f
            .evidence
            .iter()
            .filter_map(|e| e.seq.and_then(|s| times.get(&s)))
            .max()
            .copied()
            .unwrap_or(last);
        let name = format!("{} {}: {}", f.code, f.severity, f.title);
        let cat = format!("cudnn-trace,finding,{}", f.severity);
        let evidence: Vec<u64> = f.evidence.iter().filter_map(|e| e.seq).collect();
        let args = json!({"code": f.code, "severity": f.severity, "title": f.title, "fix": f.fix,
                          "alternatives": f.alternatives, "evidence_seq": evidence});
        w.event(
            "i",
            Some("p"),
            &cat,
            &name,
            pid,
            tid,
            t as i128 + off,
            None,
            args,
        );
    }
}

/// The monotonic time of each event by its `seq`.
fn seq_times(img: &Image) -> BTreeMap<u64, u64> {
    let mut m = BTreeMap::new();
    m.extend(img.loads.iter().map(|e| (e.seq, e.t_ns)));
    m.extend(img.failed.iter().map(|e| (e.ev.seq, e.ev.t_ns)));
    m.extend(img.pins.iter().map(|e| (e.seq, e.t_ns)));
    m.extend(img.versions.iter().map(|e| (e.seq, e.t_ns)));
    m.extend(img.calls.iter().map(|e| (e.seq, e.t_ns)));
    m.extend(img.unloads.iter().map(|e| (e.seq, e.t_ns)));
    m.extend(img.notes.iter().map(|e| (e.seq, e.t_ns)));
    m.extend(img.call_counts.iter().map(|e| (e.seq, e.t_ns)));
    m
}

/// How an event from `start` (when known) to `end` is drawn: an `X` slice
/// from `start` lasting `end - start`, else an instant at `end`.
fn span(start: Option<u64>, end: u64) -> (&'static str, Option<&'static str>, u64, Option<u64>) {
    match start {
        Some(s) if s <= end => ("X", None, s, Some(end - s)),
        _ => ("i", Some("t"), end, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_and_timestamps_follow_kineto() {
        // The base of a real torch 2.x trace (2026-10-01 12:17:06 UTC).
        let real = 1_790_857_026_000_000_000u64;
        assert_eq!(real % (BASE_PERIOD_S * 1_000_000_000), 0);
        assert_eq!(kineto_base(real + 12_345), real);
        assert_eq!(kineto_base(real - 1), real - BASE_PERIOD_S * 1_000_000_000);
        assert_eq!(fmt_us(4_667_688_462_482_700), "4667688462482.700");
        assert_eq!(fmt_us(5), "0.005");
    }
}
