//! The oracle: glibc's own account of what it loaded, from
//! `LD_DEBUG=libs,files LD_DEBUG_OUTPUT=<dir>/ld` (files `ld.<pid>`).
//!
//! What glibc 2.36 prints, and how it is read here (one line per event,
//! `<pid>:\t` first; a forked child keeps writing to its parent's file with
//! its own pid, so lines are grouped by that prefix, not by file):
//!
//! * `file=NAME [NS];  needed by REQ [RNS]` / `dynamically loaded by REQ [RNS]`:
//!   a request (not printed for `dlmopen` of a path, nor for a name served by
//!   an object already loaded). A trailing `(relocation dependency)` is no load.
//! * `find library=NAME [NS]; searching`, then ` search path=…`,
//!   ` search cache=…`, `  trying file=PATH` per candidate.
//! * `file=NAME [NS];  generating link map`: the object was mapped. Its path
//!   (`l_name`) is the last `trying file=` of this search, or NAME itself when
//!   NAME contains a `/` (nothing is searched then).
//! * `file=PATH [NS];  destroying link map`: unloaded.
//! * `opening file=PATH [NS]; direct_opencount=N`: a `dlopen` returned PATH.
//! * `initialize program: NAME`: a program image (its argv[0]) finished
//!   start-up. After `execve` the same pid starts a second image, which
//!   appends to the same `ld.<pid>` file.
//!
//! The main program, ld.so itself and the vdso are never "generated", so
//! they are not in the lists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One object the loader mapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdObject {
    /// Namespace as glibc printed it.
    pub ns: u64,
    /// The name that was requested (as printed on the `generating` line).
    pub name: String,
    /// The path glibc mapped (`l_name`), as printed (may be relative).
    pub path: String,
    /// The object that asked, when a request line said so.
    pub requester: Option<String>,
    /// `needed`, `dlopen`, or `unknown` (no request line: dlmopen by path,
    /// preload, audit module).
    pub via: &'static str,
}

/// One search for a name (`find library=NAME [NS]; searching`) and every
/// candidate it tried, whatever its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdSearch {
    pub ns: u64,
    pub name: String,
    /// The `trying file=` paths, in order (as printed).
    pub tried: Vec<String>,
    /// For each of `tried`, the search step that offered it: the last
    /// ` search path=… (WHAT)` or ` search cache=` line before it.
    pub from: Vec<LdStep>,
    /// Index in `tried` of the one the ld.so.cache lookup printed (after
    /// ` search cache=`). glibc prints it from the cache lookup itself, and
    /// then drops it unopened when the requester has DF_1_NODEFLIB and the
    /// entry is in a system directory (2.36 `elf/dl-load.c`): not every
    /// printed cache candidate was tried.
    pub cache_at: Option<usize>,
    /// A link map was generated for it (the last candidate was mapped).
    pub mapped: bool,
}

/// A search step as LD_DEBUG names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LdStep {
    /// `(RPATH from file OWNER)` / `(RUNPATH from file OWNER)`: the kind and
    /// the owner as printed.
    List { kind: &'static str, owner: String },
    /// `(LD_LIBRARY_PATH)`.
    LibraryPath,
    /// `(system search path)`.
    System,
    /// ` search cache=`.
    Cache,
    /// Anything else.
    Unknown,
}

impl LdStep {
    /// `… search path=DIRS\t\t(WHAT)` → the step.
    fn of_search_path(line: &str) -> LdStep {
        let what = line
            .rsplit_once('(')
            .map(|(_, w)| w.trim_end().trim_end_matches(')'))
            .unwrap_or_default();
        if let Some(owner) = what.strip_prefix("RPATH from file ") {
            LdStep::List {
                kind: "RPATH",
                owner: owner.to_string(),
            }
        } else if let Some(owner) = what.strip_prefix("RUNPATH from file ") {
            LdStep::List {
                kind: "RUNPATH",
                owner: owner.to_string(),
            }
        } else if what == "LD_LIBRARY_PATH" {
            LdStep::LibraryPath
        } else if what == "system search path" {
            LdStep::System
        } else {
            LdStep::Unknown
        }
    }
}

/// Everything read for one pid.
#[derive(Debug, Clone, Default)]
pub struct LdProcess {
    pub pid: u32,
    /// Mapped objects, in order.
    pub loaded: Vec<LdObject>,
    /// Every search, in order: those that mapped an object, those that
    /// failed, those served by an object already mapped from the same file.
    pub searches: Vec<LdSearch>,
    /// Paths unmapped (`destroying link map`), in order, with namespace.
    pub destroyed: Vec<(u64, String)>,
    /// Number of lines read for this pid.
    pub raw_lines: usize,
    /// `initialize program:` names, one per image started (argv[0]).
    pub programs: Vec<String>,
    /// The `ld.*` files (names) this pid's lines were found in.
    pub files: BTreeSet<String>,
}

/// Parses every `ld.*` file in `dir`, grouped by the pid prefix of each line.
pub fn parse_dir(dir: &Path) -> Result<BTreeMap<u32, LdProcess>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("ld."))
        })
        .collect();
    files.sort();
    let mut per_pid: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    let mut pid_files: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let text = std::fs::read(&f).map_err(|e| format!("reading {}: {e}", f.display()))?;
        let fname = f
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        for line in String::from_utf8_lossy(&text).lines() {
            let t = line.trim_start();
            let Some((pid, rest)) = t.split_once(':') else {
                continue;
            };
            let Ok(pid) = pid.parse::<u32>() else {
                continue;
            };
            let rest = rest.strip_prefix('\t').unwrap_or(rest);
            per_pid.entry(pid).or_default().push(rest.to_string());
            pid_files.entry(pid).or_default().insert(fname.clone());
        }
    }
    Ok(per_pid
        .into_iter()
        .map(|(pid, lines)| {
            let mut p = parse_lines(pid, &lines);
            p.files = pid_files.remove(&pid).unwrap_or_default();
            (pid, p)
        })
        .collect())
}

/// `NAME [NS]` → (NAME, NS).
fn name_ns(s: &str) -> Option<(&str, u64)> {
    let (name, ns) = s.rsplit_once(" [")?;
    let ns = ns.strip_suffix(']')?.parse().ok()?;
    Some((name, ns))
}

/// Parses the lines of one pid.
pub fn parse_lines(pid: u32, lines: &[String]) -> LdProcess {
    let mut p = LdProcess {
        pid,
        raw_lines: lines.len(),
        ..Default::default()
    };
    // the latest request line: (name, ns, requester, via)
    let mut request: Option<(String, u64, Option<String>, &'static str)> = None;
    let mut last_trying: Option<String> = None;
    let mut step = LdStep::Unknown;
    for line in lines {
        if let Some(rest) = line.strip_prefix("file=") {
            let Some((left, right)) = rest.split_once("];  ") else {
                continue;
            };
            let left = format!("{left}]");
            let Some((name, ns)) = name_ns(&left) else {
                continue;
            };
            if right.starts_with("generating link map") {
                if let Some(last) = p.searches.last_mut() {
                    if last.name == name && last.ns == ns && !last.mapped {
                        last.mapped = last_trying.is_some();
                    }
                }
                let path = if name.contains('/') {
                    name.to_string()
                } else {
                    last_trying.take().unwrap_or_else(|| name.to_string())
                };
                let (requester, via) = match &request {
                    Some((n, rns, r, v)) if n == name && *rns == ns => (r.clone(), *v),
                    _ => (None, "unknown"),
                };
                p.loaded.push(LdObject {
                    ns,
                    name: name.to_string(),
                    path,
                    requester,
                    via,
                });
                request = None;
                last_trying = None;
            } else if right.starts_with("destroying link map") {
                p.destroyed.push((ns, name.to_string()));
            } else if right.ends_with("(relocation dependency)") {
                // not a load
            } else if let Some(r) = right.strip_prefix("needed by ") {
                let req = name_ns(r).map(|(r, _)| r.to_string());
                request = Some((name.to_string(), ns, req, "needed"));
                last_trying = None;
            } else if let Some(r) = right.strip_prefix("dynamically loaded by ") {
                let req = name_ns(r).map(|(r, _)| r.to_string());
                request = Some((name.to_string(), ns, req, "dlopen"));
                last_trying = None;
            }
        } else if let Some(rest) = line.strip_prefix("find library=") {
            // a new search (for the pending request, or one without a request line)
            if let Some((name, ns)) = rest.split_once("; ").and_then(|(l, _)| name_ns(l)) {
                if !matches!(&request, Some((n, rns, _, _)) if n == name && *rns == ns) {
                    request = Some((name.to_string(), ns, None, "unknown"));
                }
                p.searches.push(LdSearch {
                    ns,
                    name: name.to_string(),
                    tried: vec![],
                    from: vec![],
                    cache_at: None,
                    mapped: false,
                });
            }
            last_trying = None;
        } else if line.trim_start().starts_with("search cache=") {
            step = LdStep::Cache;
            if let Some(s) = p.searches.last_mut() {
                s.cache_at = Some(s.tried.len());
            }
        } else if line.trim_start().starts_with("search path=") {
            step = LdStep::of_search_path(line);
        } else if let Some(path) = line.trim_start().strip_prefix("trying file=") {
            if let Some(s) = p.searches.last_mut() {
                s.tried.push(path.to_string());
                s.from.push(step.clone());
            }
            last_trying = Some(path.to_string());
        } else if let Some(prog) = line.strip_prefix("initialize program: ") {
            p.programs.push(prog.to_string());
        }
    }
    p
}

/// Per-pid ordered list of mapped objects (the brief's `ld_debug_loaded`).
pub fn ld_debug_loaded(dir: &Path) -> Result<BTreeMap<u32, Vec<LdObject>>, String> {
    Ok(parse_dir(dir)?
        .into_iter()
        .map(|(pid, p)| (pid, p.loaded))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_searches_paths_and_requests() {
        let text = "\
\n\
file=libc.so.6 [0];  needed by ./main [0]\n\
find library=libc.so.6 [0]; searching\n\
 search cache=/etc/ld.so.cache\n\
  trying file=/lib/x86_64-linux-gnu/libc.so.6\n\
\n\
file=libc.so.6 [0];  generating link map\n\
  dynamic: 0x1  base: 0x2   size: 0x3\n\
file=ns/libns.so [1];  generating link map\n\
file=ld-linux-x86-64.so.2 [1];  needed by /lib/x86_64-linux-gnu/libc.so.6 [1]\n\
file=/lib/x86_64-linux-gnu/libc.so.6 [1];  needed by /x/libnsdep.so [1] (relocation dependency)\n\
file=libb.so [0];  dynamically loaded by /x/liba.so [0]\n\
find library=libb.so [0]; searching\n\
 search path=/x/sub\t\t(RUNPATH from file /x/liba.so)\n\
  trying file=/x/sub/glibc-hwcaps/x86-64-v3/libb.so\n\
  trying file=/x/sub/libb.so\n\
file=libb.so [0];  generating link map\n\
file=/x/sub/libb.so [0];  destroying link map\n";
        let lines: Vec<String> = text.lines().map(String::from).collect();
        let p = parse_lines(7, &lines);
        let got: Vec<_> = p
            .loaded
            .iter()
            .map(|o| (o.ns, o.path.as_str(), o.via))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, "/lib/x86_64-linux-gnu/libc.so.6", "needed"),
                (1, "ns/libns.so", "unknown"),
                (0, "/x/sub/libb.so", "dlopen"),
            ]
        );
        assert_eq!(p.loaded[2].requester.as_deref(), Some("/x/liba.so"));
        let searches: Vec<_> = p
            .searches
            .iter()
            .map(|s| (s.name.as_str(), s.tried.len(), s.mapped))
            .collect();
        assert_eq!(searches, vec![("libc.so.6", 1, true), ("libb.so", 2, true)]);
        assert_eq!(p.searches[0].from, vec![LdStep::Cache]);
        assert_eq!(
            p.searches[1].from[1],
            LdStep::List {
                kind: "RUNPATH",
                owner: "/x/liba.so".into()
            }
        );
        assert_eq!(p.destroyed, vec![(0, "/x/sub/libb.so".to_string())]);
    }
}
