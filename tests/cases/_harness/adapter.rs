//! The one place that knows the JSON layout of `cudnn-trace report --json`'s
//! findings. Everything else in the harness reads [`Finding`]s, so when the
//! document changes (issue 8 renames `remedy` to `fix` + `alternatives`,
//! adds `consequence_of`, may add a flat `findings` list or a count), only
//! this file changes.
//!
//! Read today (main at ef703bb): `processes[].findings[]` with `code`,
//! `severity`, `title`, `remedy`, `evidence[]` (`what`, `path`, `version`,
//! `reason`, `search_dir`, `requester`, `detail`; `version` a text or, since
//! the readable-output merge, an object whose `text` is read). Also read when present:
//! `fix`, `alternatives`, `consequence_of` (codes), `count`, a top-level
//! `findings[]` with `pid` (used only when no process carries findings).

use serde_json::Value;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn parse(s: &str) -> Option<Severity> {
        match s.to_ascii_lowercase().as_str() {
            "info" | "note" | "hint" => Some(Severity::Info),
            "warning" | "warn" => Some(Severity::Warning),
            "error" | "fatal" => Some(Severity::Error),
            _ => None,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One piece of evidence.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    pub what: String,
    pub path: Option<String>,
    pub version: Option<String>,
    pub reason: Option<String>,
    pub requester: Option<String>,
    pub search_dir: Option<String>,
    pub detail: Option<String>,
}

/// One finding, as the expectations see it.
#[derive(Debug, Clone)]
pub struct Finding {
    /// The process it is about (None when the document does not say).
    pub pid: Option<u64>,
    /// Its place in its process's list: 0 is what the report shows first.
    pub rank: usize,
    pub code: String,
    pub severity: Severity,
    pub title: String,
    /// The fix first, then the alternatives.
    pub fixes: Vec<String>,
    pub evidence: Vec<Evidence>,
    /// Codes of the findings it follows from (empty: a root finding).
    pub consequence_of: Vec<String>,
    /// How many times what it reports happened, when the report says.
    pub count: Option<u64>,
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::Array(a) => a.iter().filter_map(text).collect(),
        Value::String(s) => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// A version: a text, or the document's version object (`{major, minor,
/// patch, text}`), read by its text.
fn version(v: &Value) -> Option<String> {
    text(v).or_else(|| text(&v["text"]))
}

fn evidence(v: &Value) -> Evidence {
    Evidence {
        what: text(&v["what"]).unwrap_or_default(),
        path: text(&v["path"]),
        version: version(&v["version"]),
        reason: text(&v["reason"]),
        requester: text(&v["requester"]),
        search_dir: text(&v["search_dir"]),
        detail: text(&v["detail"]),
    }
}

/// A count written into the title ("… (4 times)", "×4"), when no field has it.
fn count_in_title(title: &str) -> Option<u64> {
    let t = title;
    if let Some(i) = t.find(" times") {
        let digits: String = t[..i]
            .chars()
            .rev()
            .take_while(char::is_ascii_digit)
            .collect();
        return digits.chars().rev().collect::<String>().parse().ok();
    }
    let i = t.find('×')?;
    let digits: String = t[i + '×'.len_utf8()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn finding(v: &Value, pid: Option<u64>, rank: usize) -> Finding {
    let title = text(&v["title"]).unwrap_or_default();
    let mut fixes: Vec<String> = Vec::new();
    for key in ["fix", "remedy"] {
        if let Some(f) = text(&v[key]) {
            if !f.is_empty() {
                fixes.push(f);
            }
        }
    }
    fixes.extend(strings(&v["alternatives"]));
    let count = ["count", "occurrences", "times"]
        .iter()
        .find_map(|k| v[*k].as_u64())
        .or_else(|| count_in_title(&title));
    Finding {
        pid: pid.or_else(|| v["pid"].as_u64()),
        rank,
        code: text(&v["code"]).unwrap_or_default(),
        severity: text(&v["severity"])
            .and_then(|s| Severity::parse(&s))
            .unwrap_or(Severity::Error),
        title,
        fixes,
        evidence: v["evidence"]
            .as_array()
            .map(|a| a.iter().map(evidence).collect())
            .unwrap_or_default(),
        consequence_of: strings(&v["consequence_of"]),
        count,
    }
}

/// The libraries whose version the report could not ask at report time,
/// and why (`processes[].versions_not_asked`): a finding that needs such a
/// version (a cuDNN's CUDA build) is missing then, and a failing case says
/// so instead of leaving it to be guessed.
pub fn not_asked(doc: &Value) -> Vec<String> {
    doc["processes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| p["versions_not_asked"].as_array().into_iter().flatten())
        .map(|n| {
            format!(
                "{}: {}",
                n["path"].as_str().unwrap_or("?"),
                n["why"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

/// Every finding of a `report --json` document.
pub fn findings(doc: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in doc["processes"].as_array().into_iter().flatten() {
        let pid = p["pid"].as_u64();
        for (i, f) in p["findings"].as_array().into_iter().flatten().enumerate() {
            out.push(finding(f, pid, i));
        }
    }
    if out.is_empty() {
        // A flat list: rank within each pid, in document order.
        let mut seen: Vec<(Option<u64>, usize)> = Vec::new();
        for f in doc["findings"].as_array().into_iter().flatten() {
            let pid = f["pid"].as_u64();
            let n = match seen.iter_mut().find(|(p, _)| *p == pid) {
                Some((_, n)) => {
                    *n += 1;
                    *n - 1
                }
                None => {
                    seen.push((pid, 1));
                    0
                }
            };
            out.push(finding(f, pid, n));
        }
    }
    out
}

impl Finding {
    /// The framework messages it quotes.
    pub fn quotes(&self) -> impl Iterator<Item = &str> {
        self.evidence
            .iter()
            .filter(|e| e.what == "message")
            .filter_map(|e| e.detail.as_deref())
    }

    /// Its fix and alternatives, one text.
    pub fn fix_text(&self) -> String {
        self.fixes.join("\n")
    }

    /// Everything it says: title, evidence, fix.
    pub fn all_text(&self) -> String {
        let mut s = self.title.clone();
        for e in &self.evidence {
            for part in [
                &e.path,
                &e.version,
                &e.reason,
                &e.requester,
                &e.search_dir,
                &e.detail,
            ]
            .into_iter()
            .flatten()
            {
                s.push('\n');
                s.push_str(part);
            }
        }
        s.push('\n');
        s.push_str(&self.fix_text());
        s
    }

    /// One line for tables and failure messages.
    pub fn headline(&self) -> String {
        let mut t: String = self.title.chars().take(160).collect();
        if t.len() < self.title.len() {
            t.push('…');
        }
        let c = if self.consequence_of.is_empty() {
            String::new()
        } else {
            format!(" (consequence of {})", self.consequence_of.join(", "))
        };
        format!("{} {} {t}{c}", self.severity, self.code)
    }

    /// The whole finding, for `CDT_CASES_VERBOSE` and failure messages.
    pub fn show(&self) -> String {
        let pid = self.pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
        let mut s = format!("  #{} {}{pid}\n", self.rank, self.headline());
        for f in &self.fixes {
            s += &format!("      fix: {f}\n");
        }
        for e in &self.evidence {
            s += &format!(
                "      {}: {} {} {} {}\n",
                e.what,
                e.path.as_deref().unwrap_or(""),
                e.version.as_deref().unwrap_or(""),
                e.reason.as_deref().unwrap_or(""),
                e.detail.as_deref().unwrap_or("")
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_as_text_or_object() {
        let e = evidence(
            &serde_json::json!({"what": "loaded", "version": {"major": 7, "minor": 6, "patch": 0, "text": "7.6.0"}}),
        );
        assert_eq!(e.version.as_deref(), Some("7.6.0"));
        let e = evidence(&serde_json::json!({"what": "loaded", "version": "9.x"}));
        assert_eq!(e.version.as_deref(), Some("9.x"));
    }

    #[test]
    fn counts_from_titles() {
        assert_eq!(count_in_title("message (4 times)"), Some(4));
        assert_eq!(count_in_title("message ×12"), Some(12));
        assert_eq!(count_in_title("message"), None);
    }
}
