//! `scenario.env`: how to run a scenario and what its trace must say.
//!
//! One directive per line, `#` starts a comment line. In values, `{B}` is the
//! scenario's build directory and `{F:file}` the trimmed content of
//! `<build dir>/file` (written by `build.sh`).
//!
//! | directive | meaning |
//! |---|---|
//! | `program PATH` | program to run, relative to the build dir (default `main`) |
//! | `arg VALUE` | one argument (repeat for more; the whole rest of the line) |
//! | `env NAME=VALUE` | environment variable for both runs |
//! | `exit N` / `signal N` | expected termination (default `exit 0`) |
//! | `mode all\|cuda` | trace mode for the traced run (default `all`) |
//! | `order unordered` | compare loads per process as sets, not sequences |
//! | `expect PATH\|- key=value…` | `load` events with this path (and the selectors `name=`, `new=`, `lmid=`) must exist, and all must match the other keys |
//! | `fail NAME key=value…` | a `load_failed` event for this requested name must exist; all such events must match the keys (`via`, `lmid`, `requester`) |
//! | `errors-in-stdout` | the program prints every `dlerror()` text it reads: each `dlerror` event's text (and each `load_failed` `error`) must appear in its stdout |
//! | `absent PATH` | no `load` event may have this path |
//! | `unload PATH` | an `unload` event for this path must exist |
//! | `call FN key=value…` / `call-count FN n=N [lib=P]` / `version PATH key=value…` | the program's calls and the libraries' versions (`calls.rs`, docs/versions-and-calls.md) |
//! | `event KIND key=value…` / `no-event KIND key=value…` | some / no event of kind KIND has every key (any top-level field; `calls.rs`) |
//! | `strict-attribution` | no directory of the scenario is in two search lists: each new object's reason and owner must be the ones LD_DEBUG prints for its search step (`check.rs`) |
//! | `pin DIR` | a pin scenario (see below): DIR is the pin directory |
//! | `pin-mode strict\|warn` | the pin mode (default: none given, which is strict) |
//! | `pinned-exit N` / `pinned-signal N` | expected termination of the pinned runs (default `exit 0`) |
//! | `pinned-stderr TEXT` | the pinned runs' stderr must contain TEXT |
//! | `pinned-dlerror TEXT` | the pinned runs' trace must hold this loader error text (a `dlerror` event, or a `load_failed` `error`) |
//! | `pin-launcher refuses` | the launcher must refuse DIR (exit 125, nothing run); only the env-driven pinned run runs the program |
//! | `needs glibc X.Y REASON` | on an older glibc the scenario is skipped, saying REASON (docs/glibc.md) |
//! | `glibc<X.Y: DIRECTIVE` / `glibc>=X.Y: DIRECTIVE` | DIRECTIVE applies only on such a glibc (behaviour glibc itself changed) |
//! | `rerouted NAME to=PATH [rule=R] [requester=P]` | `pin` events for NAME exist, and all are `rerouted` to PATH |
//! | `blocked NAME [to=PATH] [rule=R] [requester=P]` | `pin` events for NAME exist, all `blocked`, each with its `load_failed` |
//! | `unpinned NAME [requester=P]` | `pin` events for NAME exist, all `unpinned` (warn mode) |
//!
//! On a glibc older than 2.35 the shim records no calls and asks no library
//! for its version (`calls: "needs-glibc-2.35"` in the process header): the
//! `call`, `call-count`, `version … source=query` and `event driver_client`
//! directives then check that header field instead (`calls.rs`). An
//! `expected-glibc-X.Y.stdout` next to `expected.stdout` replaces it on
//! glibc X.Y (a program whose own output differs there).
//!
//! In a pin scenario the `expect`, `fail`, `absent`, `unload` and
//! `errors-in-stdout` directives apply to the pinned runs; the bare run is
//! checked against `expected.stdout` and the termination only.
//!
//! `expect` selectors: `name`, `new` (`true` by default), `lmid` (`0`, `new`
//! = not 0, or a number). Checked keys: `reason`, `owner` (`@main` = the
//! executable), `realpath`, `via`, `family`, `dir` (search_dir), `rejected`
//! (a `tried` entry with that path and result `rejected`). Paths are relative to the
//! build dir unless absolute; they are compared as written (no `..`
//! folding: the loader does not fold them either).

use std::path::Path;

/// Expected termination of the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    Exit(i32),
    Signal(i32),
}

impl std::fmt::Display for Termination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Termination::Exit(c) => write!(f, "exit {c}"),
            Termination::Signal(s) => write!(f, "signal {s}"),
        }
    }
}

/// One `expect` directive.
#[derive(Debug, Clone, Default)]
pub struct Expect {
    /// Path relative to the build dir, absolute, or `None` for `-`.
    pub path: Option<String>,
    /// Required key/value pairs, in the order written.
    pub keys: Vec<(String, String)>,
    /// The directive as written (for messages).
    pub line: String,
}

impl Expect {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.keys
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// One `rerouted` / `blocked` / `unpinned` directive.
#[derive(Debug, Clone, Default)]
pub struct PinExpect {
    /// `rerouted`, `blocked` or `unpinned`: the `action` every matching event must have.
    pub action: String,
    /// The name or path as requested (a path: `{B}` substituted).
    pub name: String,
    /// `to`, `rule`, `requester`.
    pub keys: Vec<(String, String)>,
    /// The directive as written (for messages).
    pub line: String,
}

impl PinExpect {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.keys
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// What makes a scenario a pin scenario (`pin DIR` and its companions).
#[derive(Debug, Clone)]
pub struct PinSpec {
    /// The pin directory as written (relative to the build dir, or absolute).
    pub dir: String,
    /// `pin-mode`, when given (`None` runs with the default, strict).
    pub mode: Option<String>,
    /// Expected termination of the pinned runs.
    pub termination: Termination,
    pub events: Vec<PinExpect>,
    /// `pinned-stderr` lines.
    pub stderr: Vec<String>,
    /// `pinned-dlerror` texts.
    pub dlerrors: Vec<String>,
    /// `pin-launcher refuses`.
    pub launcher_refuses: bool,
}

impl PinSpec {
    /// The mode in force: `strict` unless `pin-mode warn`.
    pub fn mode(&self) -> &str {
        self.mode.as_deref().unwrap_or("strict")
    }

    pub fn strict(&self) -> bool {
        self.mode() == "strict"
    }
}

/// A parsed `scenario.env`.
#[derive(Debug, Clone)]
pub struct Spec {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub termination: Termination,
    /// `all` or `cuda`.
    pub mode: String,
    pub unordered: bool,
    pub expects: Vec<Expect>,
    /// `fail` directives (`path` holds the requested name).
    pub fails: Vec<Expect>,
    pub errors_in_stdout: bool,
    pub absent: Vec<String>,
    pub unloads: Vec<String>,
    /// `call`, `call-count` and `version` directives (see `calls.rs`).
    pub calls: Vec<Expect>,
    pub call_counts: Vec<Expect>,
    pub versions: Vec<Expect>,
    /// `event` (true) and `no-event` (false) directives: the kind is in
    /// `path` (see `calls.rs`).
    pub events: Vec<(bool, Expect)>,
    /// `strict-attribution`.
    pub strict_attribution: bool,
    /// `driver shim`: run this scenario with the shim set up directly instead
    /// of through the launcher (see `scenario.env` of 18 for why).
    pub direct_shim: bool,
    /// `pin DIR` and the pinned-run directives; `None` for a transparency scenario.
    pub pin: Option<PinSpec>,
    /// Why the scenario does not run on this glibc (`needs glibc`).
    pub skip: Option<String>,
}

impl Default for Spec {
    fn default() -> Self {
        Spec {
            program: "main".into(),
            args: vec![],
            env: vec![],
            termination: Termination::Exit(0),
            mode: "all".into(),
            unordered: false,
            expects: vec![],
            fails: vec![],
            errors_in_stdout: false,
            absent: vec![],
            unloads: vec![],
            calls: vec![],
            call_counts: vec![],
            versions: vec![],
            events: vec![],
            strict_attribution: false,
            direct_shim: false,
            pin: None,
            skip: None,
        }
    }
}

/// `X.Y` as a pair.
fn parse_version(v: &str) -> Option<(u32, u32)> {
    let (a, b) = v.split_once('.')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The running glibc's version string ("2.36").
pub fn glibc_version_text() -> String {
    // SAFETY: glibc returns a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) }
        .to_string_lossy()
        .into_owned()
}

/// The running glibc's (major, minor).
pub fn glibc_version() -> (u32, u32) {
    let v = glibc_version_text();
    let mut p = v.split('.').map(|x| x.parse().unwrap_or(0));
    (p.next().unwrap_or(0), p.next().unwrap_or(0))
}

/// `glibc<X.Y: REST` / `glibc>=X.Y: REST`: whether it applies here, and REST.
fn glibc_condition(line: &str) -> Result<Option<(bool, &str)>, String> {
    let Some(cond) = line.strip_prefix("glibc") else {
        return Ok(None);
    };
    let Some((cond, rest)) = cond.split_once(':') else {
        return Ok(None);
    };
    let (older, v) = match (cond.strip_prefix(">="), cond.strip_prefix('<')) {
        (Some(v), _) => (false, v),
        (_, Some(v)) => (true, v),
        _ => return Err("glibc<X.Y: or glibc>=X.Y: expected".into()),
    };
    let want = parse_version(v.trim()).ok_or("glibc<X.Y: or glibc>=X.Y: expected")?;
    Ok(Some(((glibc_version() < want) == older, rest.trim())))
}

/// Replaces `{B}` and `{F:file}` in `s`.
pub fn substitute(s: &str, build_dir: &Path) -> Result<String, String> {
    let b = build_dir.to_string_lossy();
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let Some(j) = tail.find('}') else {
            out.push_str(tail);
            rest = "";
            break;
        };
        let key = &tail[1..j];
        if key == "B" {
            out.push_str(&b);
        } else if let Some(f) = key.strip_prefix("F:") {
            let p = build_dir.join(f);
            let v = std::fs::read_to_string(&p)
                .map_err(|e| format!("{{F:{f}}}: reading {}: {e}", p.display()))?;
            out.push_str(v.trim());
        } else {
            out.push_str(&tail[..=j]);
        }
        rest = &tail[j + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Parses `scenario.env` text; `build_dir` is used for substitutions.
pub fn parse(text: &str, build_dir: &Path) -> Result<Spec, String> {
    let mut spec = Spec::default();
    // pin directives may come in any order; assembled at the end
    let mut pin_dir: Option<String> = None;
    let mut pin = PinSpec {
        dir: String::new(),
        mode: None,
        termination: Termination::Exit(0),
        events: vec![],
        stderr: vec![],
        dlerrors: vec![],
        launcher_refuses: false,
    };
    let mut pin_only: Option<String> = None; // a pinned-run directive, for the error
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |m: &str| format!("scenario.env line {}: {m}: {raw:?}", n + 1);
        let line = match glibc_condition(line).map_err(|e| err(&e))? {
            Some((true, directive)) => directive,
            Some((false, _)) => continue,
            None => line,
        };
        let (dir, rest) = match line.split_once(char::is_whitespace) {
            Some((d, r)) => (d, r.trim()),
            None => (line, ""),
        };
        let rest = substitute(rest, build_dir).map_err(|e| err(&e))?;
        match dir {
            "needs" => {
                let mut w = rest.splitn(3, char::is_whitespace);
                let (Some("glibc"), Some(v)) = (w.next(), w.next()) else {
                    return Err(err("needs glibc X.Y REASON"));
                };
                let want = parse_version(v).ok_or_else(|| err("needs glibc X.Y REASON"))?;
                if glibc_version() < want {
                    spec.skip = Some(format!(
                        "needs glibc {v} (this is {}): {}",
                        glibc_version_text(),
                        w.next().unwrap_or("").trim()
                    ));
                }
            }
            "program" => spec.program = rest,
            "arg" => spec.args.push(rest),
            "env" => {
                let (k, v) = rest
                    .split_once('=')
                    .ok_or_else(|| err("expected NAME=VALUE"))?;
                spec.env.push((k.to_string(), v.to_string()));
            }
            "exit" => {
                spec.termination =
                    Termination::Exit(rest.parse().map_err(|_| err("bad exit status"))?)
            }
            "signal" => {
                spec.termination =
                    Termination::Signal(rest.parse().map_err(|_| err("bad signal number"))?)
            }
            "driver" => {
                if rest != "shim" {
                    return Err(err("driver is shim (the launcher is the default)"));
                }
                spec.direct_shim = true;
            }
            "mode" => {
                if rest != "all" && rest != "cuda" {
                    return Err(err("mode is all or cuda"));
                }
                spec.mode = rest;
            }
            "order" => {
                spec.unordered = match rest.as_str() {
                    "unordered" => true,
                    "ordered" => false,
                    _ => return Err(err("order is ordered or unordered")),
                }
            }
            "expect" => {
                let mut words = rest.split_whitespace();
                let first = words
                    .next()
                    .ok_or_else(|| err("expect needs a path or -"))?;
                let mut e = Expect {
                    path: (first != "-").then(|| first.to_string()),
                    keys: vec![],
                    line: line.to_string(),
                };
                for w in words {
                    let (k, v) = w.split_once('=').ok_or_else(|| err("expected key=value"))?;
                    const KEYS: &[&str] = &[
                        "reason", "owner", "realpath", "name", "new", "lmid", "via", "family",
                        "dir", "entry", "rejected",
                    ];
                    if !KEYS.contains(&k) {
                        return Err(err(&format!("unknown expect key {k:?}")));
                    }
                    e.keys.push((k.to_string(), v.to_string()));
                }
                if e.path.is_none() && e.get("name").is_none() {
                    return Err(err("expect - needs name="));
                }
                spec.expects.push(e);
            }
            "fail" => {
                let mut words = rest.split_whitespace();
                let name = words.next().ok_or_else(|| err("fail needs a name"))?;
                let mut e = Expect {
                    path: Some(name.to_string()),
                    keys: vec![],
                    line: line.to_string(),
                };
                for w in words {
                    let (k, v) = w.split_once('=').ok_or_else(|| err("expected key=value"))?;
                    if !["via", "lmid", "requester"].contains(&k) {
                        return Err(err(&format!("unknown fail key {k:?}")));
                    }
                    e.keys.push((k.to_string(), v.to_string()));
                }
                spec.fails.push(e);
            }
            "pin" => {
                if rest.is_empty() {
                    return Err(err("pin needs a directory"));
                }
                pin_dir = Some(rest);
            }
            "pin-mode" => {
                if rest != "strict" && rest != "warn" {
                    return Err(err("pin-mode is strict or warn"));
                }
                pin.mode = Some(rest);
                pin_only.get_or_insert(line.to_string());
            }
            "pinned-exit" => {
                pin.termination =
                    Termination::Exit(rest.parse().map_err(|_| err("bad exit status"))?);
                pin_only.get_or_insert(line.to_string());
            }
            "pinned-signal" => {
                pin.termination =
                    Termination::Signal(rest.parse().map_err(|_| err("bad signal number"))?);
                pin_only.get_or_insert(line.to_string());
            }
            "pinned-stderr" => {
                if rest.is_empty() {
                    return Err(err("pinned-stderr needs a text"));
                }
                pin.stderr.push(rest);
                pin_only.get_or_insert(line.to_string());
            }
            "pinned-dlerror" => {
                if rest.is_empty() {
                    return Err(err("pinned-dlerror needs a text"));
                }
                pin.dlerrors.push(rest);
                pin_only.get_or_insert(line.to_string());
            }
            "pin-launcher" => {
                if rest != "refuses" {
                    return Err(err("pin-launcher refuses is the only form"));
                }
                pin.launcher_refuses = true;
                pin_only.get_or_insert(line.to_string());
            }
            "rerouted" | "blocked" | "unpinned" => {
                let mut words = rest.split_whitespace();
                let name = words
                    .next()
                    .ok_or_else(|| err("needs the requested name or path"))?;
                let mut e = PinExpect {
                    action: dir.to_string(),
                    name: name.to_string(),
                    keys: vec![],
                    line: line.to_string(),
                };
                let allowed: &[&str] = match dir {
                    "unpinned" => &["requester"],
                    _ => &["to", "rule", "requester"],
                };
                for w in words {
                    let (k, v) = w.split_once('=').ok_or_else(|| err("expected key=value"))?;
                    if !allowed.contains(&k) {
                        return Err(err(&format!("unknown {dir} key {k:?}")));
                    }
                    if k == "rule" && !["same-name", "same-major", "not-in-pin-dir"].contains(&v) {
                        return Err(err("rule is same-name, same-major or not-in-pin-dir"));
                    }
                    e.keys.push((k.to_string(), v.to_string()));
                }
                if dir == "rerouted" && e.get("to").is_none() {
                    return Err(err("rerouted needs to=PATH"));
                }
                pin.events.push(e);
                pin_only.get_or_insert(line.to_string());
            }
            "errors-in-stdout" => spec.errors_in_stdout = true,
            "strict-attribution" => spec.strict_attribution = true,
            "absent" => spec.absent.push(rest),
            "unload" => spec.unloads.push(rest),
            "call" | "call-count" | "version" => {
                let e = crate::calls::parse(dir, &rest, line).map_err(|m| err(&m))?;
                match dir {
                    "call" => spec.calls.push(e),
                    "call-count" => spec.call_counts.push(e),
                    _ => spec.versions.push(e),
                }
            }
            "event" | "no-event" => {
                let e = crate::calls::parse_event(&rest, line).map_err(|m| err(&m))?;
                spec.events.push((dir == "event", e));
            }
            _ => return Err(err("unknown directive")),
        }
    }
    match pin_dir {
        Some(d) => {
            if spec.direct_shim {
                return Err("scenario.env: `driver shim` and `pin` do not mix (a pin scenario runs both drivers)".into());
            }
            pin.dir = d;
            spec.pin = Some(pin);
        }
        None => {
            if let Some(l) = pin_only {
                return Err(format!(
                    "scenario.env: {l:?} belongs to a pin scenario, but there is no `pin DIR`"
                ));
            }
        }
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pin_directives() {
        let b = Path::new("/b");
        let s = parse(
            "pin pin\npin-mode warn\npinned-signal 6\npinned-stderr Unable to load\n\
             rerouted libcudnn.so.9 to=pin/libcudnn.so.9 rule=same-name requester=@main\n\
             unpinned {B}/sys/libcudnn_cnn.so.9\n",
            b,
        )
        .unwrap();
        let p = s.pin.unwrap();
        assert_eq!(p.dir, "pin");
        assert_eq!(p.mode(), "warn");
        assert_eq!(p.termination, Termination::Signal(6));
        assert_eq!(p.stderr, vec!["Unable to load".to_string()]);
        assert_eq!(p.events.len(), 2);
        assert_eq!(p.events[0].get("rule"), Some("same-name"));
        assert_eq!(p.events[1].name, "/b/sys/libcudnn_cnn.so.9");
        assert!(parse("pinned-exit 1\n", b).is_err());
        assert!(parse("pin p\nrerouted libcudnn.so.9\n", b).is_err());
        assert!(parse("pin p\nunpinned libcudnn.so.9 to=x\n", b).is_err());
        assert!(parse("exit 1\n", b).unwrap().pin.is_none());
    }
}
