//! Per-code control: the findings a project ignores, and the severity it
//! gives a code, from the command line (`--ignore CODE`, `--severity
//! CODE=LEVEL`) and from a configuration file (`cudnn-trace.toml`, or
//! `[tool.cudnn-trace]` in `pyproject.toml`).
//!
//! A [`Policy`] is applied to a [`Diagnosis`] after the rules ran, so that
//! every front end (the launcher's summary, `report`, a Python package) and
//! everything downstream (the text, the JSON document, `--fail-on`) sees
//! the same findings. Nothing is lost: an ignored finding moves to
//! [`Diagnosis::ignored`] and a re-ranked one keeps its rule's severity in
//! its [`PolicyMark`], so the JSON document still shows both.
//!
//! The file format and where the file is found are documented in
//! `docs/config.md`; in short:
//!
//! ```toml
//! # cudnn-trace.toml (or [tool.cudnn-trace] in pyproject.toml)
//! ignore = ["CDT005"]            # codes or names, as `cudnn-trace explain` lists them
//! [severity]
//! CDT001 = "error"               # error, warning or info
//! ```

use super::findings::{rank, ImageFindings, PolicyMark, Severity, CODES};
use super::Diagnosis;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The configuration files, in the order they are looked for in each
/// directory (the first one found in the nearest directory wins, as ruff
/// does with `.ruff.toml`, `ruff.toml`, `pyproject.toml`).
pub const CONFIG_FILES: &[&str] = &[".cudnn-trace.toml", "cudnn-trace.toml", "pyproject.toml"];

/// The table of `pyproject.toml` that holds the settings.
pub const PYPROJECT_TABLE: &str = "tool.cudnn-trace";

/// What the policy does with one code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Leave the finding out of the report, the counts and the gate.
    Ignore,
    /// Report it at this severity instead of the rule's own.
    Severity(Severity),
}

/// Where a setting came from: a command-line option or a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `--ignore` or `--severity`.
    Option(&'static str),
    /// A configuration file, as found.
    File(PathBuf),
}

impl Origin {
    /// How a reader sees it: `--ignore`, or the file's path (relative to
    /// the working directory when inside it).
    pub fn label(&self) -> String {
        match self {
            Origin::Option(o) => (*o).to_string(),
            Origin::File(p) => {
                let cwd = std::env::current_dir().unwrap_or_default();
                match p.strip_prefix(&cwd) {
                    Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
                    _ => p.display().to_string(),
                }
            }
        }
    }
}

/// The settings per code, each with where it came from. Later settings of
/// a code replace earlier ones: load the file first, then the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    codes: BTreeMap<&'static str, (Action, Origin)>,
}

impl Policy {
    /// Sets what to do with `code` (a code from [`CODES`]).
    pub fn set(&mut self, code: &'static str, action: Action, origin: Origin) {
        self.codes.insert(code, (action, origin));
    }

    /// Whether no code has a setting.
    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// The setting of `code`, if any.
    pub fn get(&self, code: &str) -> Option<&(Action, Origin)> {
        self.codes.get(code)
    }

    /// Applies the settings: ignored findings move to `d.ignored` (same
    /// image order as `d.images`), re-ranked ones get their new severity;
    /// both carry a [`PolicyMark`]. The findings of each image are then
    /// ranked again ([`rank`]: most severe first, root causes before their
    /// consequences).
    pub fn apply(&self, d: &mut Diagnosis) {
        if self.is_empty() {
            return;
        }
        let mut ignored = Vec::with_capacity(d.images.len());
        for img in &mut d.images {
            let mut gone = Vec::new();
            for mut f in std::mem::take(&mut img.findings) {
                match self.codes.get(f.code) {
                    Some((Action::Ignore, origin)) => {
                        f.policy = Some(PolicyMark {
                            ignored: true,
                            rule_severity: None,
                            by: origin.label(),
                        });
                        gone.push(f);
                    }
                    Some((Action::Severity(s), origin)) => {
                        if *s != f.severity {
                            f.policy = Some(PolicyMark {
                                ignored: false,
                                rule_severity: Some(f.severity),
                                by: origin.label(),
                            });
                            f.severity = *s;
                        }
                        img.findings.push(f);
                    }
                    None => img.findings.push(f),
                }
            }
            // A finding no longer shown is no one's root cause: the
            // symptom it explained stands on its own (and can lead the
            // verdict). Then the order of the rules again: a re-ranked
            // finding takes its place among its new severity, root causes
            // before their consequences.
            for f in &mut img.findings {
                f.consequence_of
                    .retain(|c| !gone.iter().any(|g| g.code == *c));
            }
            img.findings.sort_by(rank);
            ignored.push(ImageFindings {
                file: img.file.clone(),
                pid: img.pid,
                findings: gone,
            });
        }
        d.ignored = ignored;
    }
}

/// The code a user means: `CDT005`, `cdt005` or its name
/// (`forward-compat-driver`). None when no rule has it.
pub fn code(s: &str) -> Option<&'static str> {
    let s = s.trim();
    CODES
        .iter()
        .find(|(c, n)| c.eq_ignore_ascii_case(s) || n.eq_ignore_ascii_case(s))
        .map(|(c, _)| *c)
}

/// The message for a code no rule has.
pub fn unknown_code(s: &str) -> String {
    format!("no finding has the code {s:?} (`cudnn-trace explain` lists them)")
}

/// `CODE=LEVEL`, the value of `--severity`.
pub fn parse_severity(s: &str) -> Result<(&'static str, Severity), String> {
    let (c, l) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: want CODE=LEVEL, such as CDT001=error"))?;
    let c = code(c).ok_or_else(|| unknown_code(c))?;
    let l = Severity::parse(l.trim())
        .ok_or_else(|| format!("{c}: the level is error, warning or info, not {l:?}"))?;
    Ok((c, l))
}

/// A configuration file read: its settings, and what in it was not
/// understood but did no harm (unknown codes and keys), one line each.
#[derive(Debug, Default)]
pub struct Config {
    pub path: PathBuf,
    pub policy: Policy,
    pub warnings: Vec<String>,
}

/// Finds the configuration that applies in `dir`: the nearest of `dir` and
/// its parents that has one of [`CONFIG_FILES`] (a `pyproject.toml` counts
/// only with a `[tool.cudnn-trace]` table), then read. Ok(None): there is
/// none. Err: the file found cannot be read or is not valid.
pub fn discover(dir: &Path) -> Result<Option<Config>, String> {
    for d in dir.ancestors() {
        for name in CONFIG_FILES {
            let p = d.join(name);
            if !p.is_file() {
                continue;
            }
            let text = read(&p)?;
            // Another project's pyproject.toml (even a broken one) is not
            // ours to judge: only one that names us is parsed.
            if *name == "pyproject.toml"
                && (!text.contains("cudnn-trace") || !has_tool_table(&text, &p)?)
            {
                continue;
            }
            return parse(&text, &p).map(Some);
        }
    }
    Ok(None)
}

/// Reads the configuration file `path` (named with `--config`): a
/// `pyproject.toml` (by its name) must have a `[tool.cudnn-trace]` table.
pub fn load(path: &Path) -> Result<Config, String> {
    let text = read(path)?;
    if is_pyproject(path) && !has_tool_table(&text, path)? {
        return Err(format!("{}: no [{PYPROJECT_TABLE}] table", path.display()));
    }
    parse(&text, path)
}

fn is_pyproject(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == "pyproject.toml")
}

/// A configuration file is small; a huge one is a mistake, not a config.
const MAX_BYTES: u64 = 1 << 20;

fn read(p: &Path) -> Result<String, String> {
    use std::io::Read;
    let f = std::fs::File::open(p).map_err(|e| crate::model::io_err(p, &e))?;
    let mut text = String::new();
    f.take(MAX_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| crate::model::io_err(p, &e))?;
    Ok(text)
}

fn toml_table(text: &str, p: &Path) -> Result<toml::Table, String> {
    text.parse::<toml::Table>().map_err(|e| {
        format!(
            "{}: not valid TOML: {}",
            p.display(),
            one_line(&e.to_string())
        )
    })
}

/// The parser's message folded onto one line (it draws the line in
/// question under its first line).
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn has_tool_table(text: &str, p: &Path) -> Result<bool, String> {
    let t = toml_table(text, p)?;
    Ok(tool_table(&t).is_some())
}

fn tool_table(t: &toml::Table) -> Option<&toml::Table> {
    t.get("tool")?.as_table()?.get("cudnn-trace")?.as_table()
}

/// Parses a configuration file's text; `path` names it in the messages and
/// the marks.
pub fn parse(text: &str, path: &Path) -> Result<Config, String> {
    let whole = toml_table(text, path)?;
    let table = if is_pyproject(path) {
        tool_table(&whole).cloned().unwrap_or_default()
    } else {
        whole
    };
    let shown = path.display();
    let origin = Origin::File(path.to_path_buf());
    let mut cfg = Config {
        path: path.to_path_buf(),
        ..Default::default()
    };
    let mut unknown = Vec::new();
    let mut code_of = |s: &str| {
        let c = code(s);
        if c.is_none() {
            unknown.push(s.to_string());
        }
        c
    };
    // Severities first: a code both re-ranked and ignored is ignored.
    if let Some(v) = table.get("severity") {
        let t = v.as_table().ok_or_else(|| {
            format!("{shown}: severity must be a table, such as [severity] CDT001 = \"error\"")
        })?;
        for (k, v) in t {
            let level = v.as_str().and_then(Severity::parse).ok_or_else(|| {
                format!("{shown}: severity {k}: the level is \"error\", \"warning\" or \"info\", not {}", shown_value(v))
            })?;
            if let Some(c) = code_of(k) {
                cfg.policy.set(c, Action::Severity(level), origin.clone());
            }
        }
    }
    if let Some(v) = table.get("ignore") {
        for s in strings(v).ok_or_else(|| {
            format!("{shown}: ignore must be a list of codes, such as ignore = [\"CDT005\"]")
        })? {
            if let Some(c) = code_of(s) {
                cfg.policy.set(c, Action::Ignore, origin.clone());
            }
        }
    }
    if !unknown.is_empty() {
        cfg.warnings.push(format!(
            "{shown}: no finding has the code {} (`cudnn-trace explain` lists them); {} ignored",
            unknown.join(", "),
            if unknown.len() == 1 {
                "it is"
            } else {
                "they are"
            }
        ));
    }
    let keys: Vec<&str> = table
        .keys()
        .map(String::as_str)
        .filter(|k| !["ignore", "severity"].contains(k))
        .collect();
    if !keys.is_empty() {
        cfg.warnings.push(format!(
            "{shown}: unknown setting {} (known: ignore, severity); not used",
            keys.join(", ")
        ));
    }
    Ok(cfg)
}

/// A value as a message shows it: a string quoted, else its TOML type.
fn shown_value(v: &toml::Value) -> String {
    match v.as_str() {
        Some(s) => format!("{s:?}"),
        None => format!("a {}", v.type_str()),
    }
}

/// A list of strings, or one string.
fn strings(v: &toml::Value) -> Option<Vec<&str>> {
    match v {
        toml::Value::String(s) => Some(vec![s.as_str()]),
        toml::Value::Array(a) => a.iter().map(toml::Value::as_str).collect(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::findings::Finding;
    use crate::testutil::tempdir;
    use std::fs;

    fn finding(code: &'static str, severity: Severity) -> Finding {
        Finding {
            code,
            severity,
            title: format!("{code} title"),
            fix: String::new(),
            alternatives: Vec::new(),
            evidence: Vec::new(),
            consequence_of: Vec::new(),
            count: None,
            sources: Vec::new(),
            policy: None,
        }
    }

    fn diagnosis() -> Diagnosis {
        Diagnosis {
            images: vec![ImageFindings {
                file: "1.jsonl".into(),
                pid: 1,
                findings: vec![
                    finding("CDT008", Severity::Error),
                    finding("CDT001", Severity::Warning),
                    finding("CDT005", Severity::Info),
                ],
            }],
            ignored: Vec::new(),
            knowledge_origin: BTreeMap::new(),
            knowledge_warnings: Vec::new(),
        }
    }

    fn codes(d: &Diagnosis) -> Vec<(&str, Severity)> {
        d.all().map(|f| (f.code, f.severity)).collect()
    }

    #[test]
    fn codes_by_code_or_name_in_any_case() {
        assert_eq!(code("CDT005"), Some("CDT005"));
        assert_eq!(code(" cdt005 "), Some("CDT005"));
        assert_eq!(code("forward-compat-driver"), Some("CDT005"));
        assert_eq!(code("CDT999"), None);
        assert_eq!(
            parse_severity("cdt001=error"),
            Ok(("CDT001", Severity::Error))
        );
        assert!(parse_severity("CDT001").unwrap_err().contains("CODE=LEVEL"));
        assert!(parse_severity("CDT001=fatal")
            .unwrap_err()
            .contains("not \"fatal\""));
        assert!(parse_severity("CDT999=info")
            .unwrap_err()
            .contains("CDT999"));
    }

    #[test]
    fn ignored_findings_move_aside_marked_and_stop_counting() {
        let mut d = diagnosis();
        let mut p = Policy::default();
        p.set("CDT008", Action::Ignore, Origin::Option("--ignore"));
        p.apply(&mut d);
        assert_eq!(
            codes(&d),
            vec![("CDT001", Severity::Warning), ("CDT005", Severity::Info)]
        );
        assert!(!d.trips(Some(Severity::Error)));
        assert!(d.trips(Some(Severity::Warning)));
        assert_eq!(d.ignored.len(), 1);
        let gone = &d.ignored[0].findings;
        assert_eq!(gone.len(), 1);
        assert_eq!(gone[0].code, "CDT008");
        assert_eq!(
            gone[0].policy,
            Some(PolicyMark {
                ignored: true,
                rule_severity: None,
                by: "--ignore".into()
            })
        );
        let json = serde_json::to_value(&gone[0]).unwrap();
        assert_eq!(json["policy"]["ignored"], true);
    }

    #[test]
    fn severity_changes_reorder_and_gate() {
        let mut d = diagnosis();
        let mut p = Policy::default();
        p.set(
            "CDT005",
            Action::Severity(Severity::Error),
            Origin::Option("--severity"),
        );
        p.set(
            "CDT008",
            Action::Severity(Severity::Info),
            Origin::Option("--severity"),
        );
        // The rule's own severity again: no mark.
        p.set(
            "CDT001",
            Action::Severity(Severity::Warning),
            Origin::Option("--severity"),
        );
        p.apply(&mut d);
        assert_eq!(
            codes(&d),
            vec![
                ("CDT005", Severity::Error),
                ("CDT001", Severity::Warning),
                ("CDT008", Severity::Info)
            ]
        );
        let f = &d.images[0].findings;
        assert_eq!(
            f[0].policy.as_ref().unwrap().rule_severity,
            Some(Severity::Info)
        );
        assert_eq!(f[1].policy, None);
        assert!(d.ignored[0].findings.is_empty());
        assert!(d.trips(Some(Severity::Error)));
    }

    #[test]
    fn later_settings_win() {
        let mut d = diagnosis();
        let mut p = Policy::default();
        let file = Origin::File("/p/cudnn-trace.toml".into());
        p.set("CDT008", Action::Ignore, file.clone());
        p.set(
            "CDT008",
            Action::Severity(Severity::Warning),
            Origin::Option("--severity"),
        );
        p.apply(&mut d);
        // Re-ranked, and placed by rank within its new severity (neither
        // follows from the other: by code).
        assert_eq!(
            codes(&d),
            vec![
                ("CDT001", Severity::Warning),
                ("CDT008", Severity::Warning),
                ("CDT005", Severity::Info)
            ]
        );
        let mark = d.images[0].findings[1].policy.as_ref().unwrap();
        assert_eq!(mark.by, "--severity");
        assert_eq!(mark.rule_severity, Some(Severity::Error));
    }

    #[test]
    fn an_empty_policy_changes_nothing() {
        let mut d = diagnosis();
        Policy::default().apply(&mut d);
        assert_eq!(codes(&d), codes(&diagnosis()));
        assert!(d.ignored.is_empty());
    }

    #[test]
    fn config_file_format() {
        let text = r#"
ignore = ["CDT005", "duplicate-library", "CDT404"]
colour = "always"
[severity]
CDT008 = "warning"
cdt001 = "error"   # ignored below: ignore wins in one file
CDT777 = "info"
"#;
        let cfg = parse(text, Path::new("/p/cudnn-trace.toml")).unwrap();
        let p = &cfg.policy;
        assert_eq!(p.get("CDT005").unwrap().0, Action::Ignore);
        assert_eq!(p.get("CDT001").unwrap().0, Action::Ignore);
        assert_eq!(
            p.get("CDT008").unwrap(),
            &(
                Action::Severity(Severity::Warning),
                Origin::File("/p/cudnn-trace.toml".into())
            )
        );
        assert_eq!(cfg.warnings.len(), 2, "{:?}", cfg.warnings);
        assert!(
            cfg.warnings[0].contains("CDT777, CDT404"),
            "{:?}",
            cfg.warnings
        );
        assert!(
            cfg.warnings[1].contains("unknown setting colour"),
            "{:?}",
            cfg.warnings
        );

        // One string is a list of one.
        let cfg = parse("ignore = \"CDT005\"", Path::new("c.toml")).unwrap();
        assert_eq!(cfg.policy.get("CDT005").unwrap().0, Action::Ignore);

        for (bad, says) in [
            ("ignore = 5", "ignore must be a list"),
            ("severity = \"error\"", "severity must be a table"),
            ("[severity]\nCDT001 = \"fatal\"", "not \"fatal\""),
            ("ignore = [", "not valid TOML"),
        ] {
            let e = parse(bad, Path::new("c.toml")).unwrap_err();
            assert!(e.starts_with("c.toml: ") && e.contains(says), "{bad}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn pyproject_table() {
        let text = "[project]\nname = \"x\"\n[tool.cudnn-trace]\nignore = [\"CDT005\"]\n[tool.cudnn-trace.severity]\nCDT001 = \"info\"\n";
        let cfg = parse(text, Path::new("pyproject.toml")).unwrap();
        assert_eq!(cfg.policy.get("CDT005").unwrap().0, Action::Ignore);
        assert_eq!(
            cfg.policy.get("CDT001").unwrap().0,
            Action::Severity(Severity::Info)
        );
        assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
    }

    #[test]
    fn discovery_takes_the_nearest_file() {
        let root = tempdir("policy-discover");
        let sub = root.join("a/b/c");
        fs::create_dir_all(&sub).unwrap();
        assert!(discover(&sub)
            .unwrap()
            .is_none_or(|c| !c.path.starts_with(&root)));

        // A pyproject.toml without the table is passed over.
        fs::write(root.join("a/pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
        fs::write(root.join("cudnn-trace.toml"), "ignore = [\"CDT001\"]\n").unwrap();
        let found = discover(&sub).unwrap().unwrap();
        assert_eq!(found.path, root.join("cudnn-trace.toml"));

        // Nearer wins; in one directory cudnn-trace.toml beats pyproject.toml,
        // and .cudnn-trace.toml beats both.
        fs::write(
            root.join("a/pyproject.toml"),
            "[tool.cudnn-trace]\nignore = [\"CDT002\"]\n",
        )
        .unwrap();
        assert_eq!(
            discover(&sub).unwrap().unwrap().path,
            root.join("a/pyproject.toml")
        );
        fs::write(root.join("a/cudnn-trace.toml"), "").unwrap();
        assert_eq!(
            discover(&sub).unwrap().unwrap().path,
            root.join("a/cudnn-trace.toml")
        );
        fs::write(root.join("a/.cudnn-trace.toml"), "").unwrap();
        assert_eq!(
            discover(&sub).unwrap().unwrap().path,
            root.join("a/.cudnn-trace.toml")
        );

        // The nearest file is broken: an error, not a farther file.
        fs::write(root.join("a/b/cudnn-trace.toml"), "ignore = [").unwrap();
        assert!(discover(&sub).unwrap_err().contains("not valid TOML"));
    }

    #[test]
    fn load_named_file() {
        let d = tempdir("policy-load");
        assert!(load(&d.join("nope.toml"))
            .unwrap_err()
            .ends_with("nope.toml: no such file or directory"));
        fs::write(d.join("pyproject.toml"), "[project]\n").unwrap();
        assert!(load(&d.join("pyproject.toml"))
            .unwrap_err()
            .contains("no [tool.cudnn-trace] table"));
        fs::write(d.join("mine.toml"), "ignore = [\"CDT003\"]").unwrap();
        let cfg = load(&d.join("mine.toml")).unwrap();
        assert_eq!(cfg.policy.get("CDT003").unwrap().0, Action::Ignore);
    }
}
