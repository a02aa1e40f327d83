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
        };
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
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
