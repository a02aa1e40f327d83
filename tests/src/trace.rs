//! Reading a trace directory written by the shim.

use cudnn_trace_format::read::{parse_line, Event, LineError, Load, Process};
use std::path::{Path, PathBuf};

/// One trace file (one process image).
#[derive(Debug, Clone)]
pub struct ProcessTrace {
    pub file: PathBuf,
    /// The `process` header (the first line), if it parsed.
    pub header: Option<Process>,
    /// Every event that parsed, header included, in file order.
    pub events: Vec<Event>,
    /// Lines that did not parse: (1-based line number, text, error).
    pub bad_lines: Vec<(usize, String, LineError)>,
    /// Every line that is a JSON object, in file order, whether or not the
    /// typed reader knows its kind (the `pin` records are read from here).
    pub values: Vec<serde_json::Value>,
}

/// A `pin` record (docs/pin.md), read from the raw JSON.
#[derive(Debug, Clone, Default)]
pub struct PinEvent {
    pub seq: u64,
    pub pid: u32,
    /// The name or path as requested.
    pub name: String,
    pub requester: Option<String>,
    /// `rerouted`, `blocked` or `unpinned`.
    pub action: String,
    pub to: Option<String>,
    /// `same-name`, `same-major` or `not-in-pin-dir`.
    pub rule: String,
    pub dir: String,
    pub mode: String,
    /// What was wrong with the record's fields, if anything.
    pub problems: Vec<String>,
}

/// The `pin` object of a `process` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderPin {
    pub dir: Option<String>,
    pub mode: Option<String>,
}

fn str_field(v: &serde_json::Value, k: &str) -> Option<String> {
    v.get(k).and_then(|x| x.as_str()).map(String::from)
}

impl ProcessTrace {
    /// The pid: from the header, else from the file name.
    pub fn pid(&self) -> Option<u32> {
        if let Some(h) = &self.header {
            return Some(h.pid);
        }
        let stem = self.file.file_name()?.to_str()?;
        stem.split('.').next()?.parse().ok()
    }

    /// `load` events, in `seq` order.
    pub fn loads(&self) -> Vec<&Load> {
        let mut v: Vec<&Load> = self
            .events
            .iter()
            .filter_map(|e| {
                if let Event::Load(l) = e {
                    Some(l)
                } else {
                    None
                }
            })
            .collect();
        v.sort_by_key(|l| l.seq);
        v
    }

    /// `load` events of objects that entered the process (`new: true`), in `seq` order.
    pub fn new_loads(&self) -> Vec<&Load> {
        self.loads().into_iter().filter(|l| l.new).collect()
    }

    /// Which image of its pid this file is: `<pid>.jsonl` is 0,
    /// `<pid>.<n>.jsonl` is n (the n-th `execve`).
    pub fn image(&self) -> u32 {
        let name = self
            .file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let stem = name.strip_suffix(".jsonl").unwrap_or(name);
        stem.split_once('.')
            .and_then(|(_, n)| n.parse().ok())
            .unwrap_or(0)
    }

    /// The `seq` of every event line (all but the header), from the raw JSON,
    /// so that kinds the typed reader does not know still count.
    pub fn seqs(&self) -> Vec<u64> {
        self.values
            .iter()
            .filter(|v| v.get("ev").and_then(|e| e.as_str()) != Some("process"))
            .filter_map(|v| v.get("seq").and_then(|s| s.as_u64()))
            .collect()
    }

    /// The header's `pin` object: `None` when the header has none (or there is
    /// no header).
    pub fn header_pin(&self) -> Option<HeaderPin> {
        let h = self.values.first()?;
        if h.get("ev").and_then(|e| e.as_str()) != Some("process") {
            return None;
        }
        let p = h.get("pin")?;
        if p.is_null() {
            return None;
        }
        Some(HeaderPin {
            dir: str_field(p, "dir"),
            mode: str_field(p, "mode"),
        })
    }

    /// The `pin` records, in `seq` order.
    pub fn pin_events(&self) -> Vec<PinEvent> {
        let mut v: Vec<PinEvent> = self
            .values
            .iter()
            .filter(|v| v.get("ev").and_then(|e| e.as_str()) == Some("pin"))
            .map(|v| {
                let mut problems = vec![];
                let mut need = |k: &str| {
                    str_field(v, k).unwrap_or_else(|| {
                        problems.push(format!("no string field {k:?}"));
                        String::new()
                    })
                };
                let name = need("name");
                let action = need("action");
                let rule = need("rule");
                let dir = need("dir");
                let mode = need("mode");
                let seq = v.get("seq").and_then(|s| s.as_u64()).unwrap_or_else(|| {
                    problems.push("no seq".into());
                    0
                });
                for k in ["to", "requester"] {
                    if !v.get(k).is_some_and(|x| x.is_null() || x.is_string()) {
                        problems.push(format!("{k:?} is neither a string nor null"));
                    }
                }
                PinEvent {
                    seq,
                    pid: v
                        .get("pid")
                        .and_then(|p| p.as_u64())
                        .map(|p| p as u32)
                        .unwrap_or_default(),
                    name,
                    requester: str_field(v, "requester"),
                    action,
                    to: str_field(v, "to"),
                    rule,
                    dir,
                    mode,
                    problems,
                }
            })
            .collect();
        v.sort_by_key(|e| e.seq);
        v
    }

    /// The main program's `load` event, if recorded.
    pub fn main_program(&self) -> Option<&Load> {
        self.loads()
            .into_iter()
            .find(|l| l.reason == cudnn_trace_format::reason::MAIN_PROGRAM)
    }
}

fn collect_jsonl(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            collect_jsonl(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
    Ok(())
}

/// Reads every `*.jsonl` file under `dir` (recursively: the launcher may put a
/// session directory under `--out`), sorted by path.
pub fn read_trace(dir: &Path) -> Result<Vec<ProcessTrace>, String> {
    let mut files = vec![];
    collect_jsonl(dir, &mut files).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    files.sort();
    let mut out = vec![];
    for file in files {
        let bytes = std::fs::read(&file).map_err(|e| format!("reading {}: {e}", file.display()))?;
        let text = String::from_utf8_lossy(&bytes);
        let mut t = ProcessTrace {
            file: file.clone(),
            header: None,
            events: vec![],
            bad_lines: vec![],
            values: vec![],
        };
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
                if v.is_object() {
                    t.values.push(v);
                }
            }
            match parse_line(line) {
                Ok(ev) => {
                    if let (0, Event::Process(p)) = (t.events.len(), &ev) {
                        t.header = Some(p.clone());
                    }
                    t.events.push(ev);
                }
                Err(e) => t.bad_lines.push((i + 1, line.to_string(), e)),
            }
        }
        out.push(t);
    }
    Ok(out)
}
