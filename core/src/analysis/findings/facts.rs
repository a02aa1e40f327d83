//! The facts of one process image that the rules reason about: the CUDA
//! libraries that entered it with every version known about each (from the
//! library itself, its calls, its file name), failed loads, the program's
//! calls, CUDA error codes seen in calls or in stderr, and the framework
//! messages found in stderr.

use super::knowledge::Knowledge;
use super::Ver;
use crate::analysis::files::{Found, ImageFiles, Source, StaticRuntime};
use crate::model::events::{self, CallEvent, VersionEvent};
use crate::model::name_version::{self, NameVersion};
use crate::model::trace::{Failed, Image};
use cudnn_trace_format::read::Load;
use std::collections::BTreeMap;

/// Most stderr bytes looked at (its end, where the fatal messages are).
pub const MAX_STDERR: usize = 16 << 20;
/// Distinct matches kept per message rule.
const MAX_MATCHES: usize = 3;

/// A CUDA-family library that entered the process.
#[derive(Debug, Clone)]
pub struct Lib<'a> {
    pub load: &'a Load,
    pub family: String,
    /// File name before `.so`: `libcudnn_graph`, `libcudart`, `libcuda`.
    pub stem: String,
    /// The soname major (`libcudart.so.12` → 12, `libcudart.so.11.0` → 11,
    /// `libcudnn_graph.so.9.14.0` → 9); None for `libcuda` (its `.1` is an
    /// ABI number, not a version) and unversioned names.
    pub major: Option<u32>,
    /// A version of two or more components from the path or real path.
    pub name_version: Option<Ver>,
    /// `libcuda.so.<driver version>` ([R7][R8][E1]).
    pub driver_file: Option<Ver>,
    /// The `version` event of this object, if any.
    pub query: Option<VersionEvent>,
    /// A version found outside the process (asked at report time, the
    /// names it asked for, its pip package): `analysis::files`.
    pub found: Option<Found>,
    /// The version the program read from it (`cudnnGetVersion`), where
    /// that answer is the library's own ([`version_read`]).
    pub called: Option<Ver>,
    /// `seq` of the unload that removed it, if any.
    pub unloaded_at: Option<u64>,
}

impl Lib<'_> {
    pub fn path(&self) -> &str {
        &self.load.path
    }

    /// The path with symlinks resolved (the path itself when unknown).
    pub fn real(&self) -> &str {
        self.load.realpath.as_deref().unwrap_or(&self.load.path)
    }

    /// The directory of the real path.
    pub fn dir(&self) -> &str {
        dirname(self.real())
    }

    /// The file's identity: `dev:ino` when recorded, else its real path.
    pub fn identity(&self) -> String {
        match (self.load.dev, self.load.ino) {
            (Some(d), Some(i)) => format!("{d}:{i}"),
            _ => self.real().to_string(),
        }
    }

    /// A stub of its family (the shim's `stub` flag; for older traces a
    /// `stubs` directory in its path or `_stub` in its file name).
    pub fn is_stub(&self) -> bool {
        let named = |p: &str| p.contains("/stubs/") || basename(p).contains("_stub");
        self.load.stub || named(self.path()) || named(self.real())
    }

    /// Whether `path` names this object (its path or real path).
    pub fn is(&self, path: &str) -> bool {
        self.load.path == path || self.load.realpath.as_deref() == Some(path)
    }

    /// The best version known and where it comes from.
    pub fn version(&self) -> Option<(Ver, &'static str)> {
        if let Some(q) = &self.query {
            if let Some(v) = q.version.as_deref().and_then(Ver::parse) {
                if v.0.len() >= 2 && q.source.as_deref() == Some("query") {
                    return Some((v, "reported by the library"));
                }
            }
        }
        let found = self.found.as_ref().and_then(|f| {
            let v = f.version.as_deref().and_then(Ver::parse)?;
            (v.0.len() >= 2).then_some((v, f.source))
        });
        if let Some((v, s @ (Source::Asked | Source::AskedCached))) = &found {
            return Some((v.clone(), s.words()));
        }
        if let Some(v) = &self.name_version {
            return Some((v.clone(), "from the file name"));
        }
        if let Some(v) = &self.called {
            return Some((v.clone(), "read by the program (cudnnGetVersion)"));
        }
        if let Some((v, s)) = found {
            return Some((v, s.words()));
        }
        let q = self.query.as_ref()?;
        let v = q.version.as_deref().and_then(Ver::parse)?;
        (v.0.len() >= 2).then_some((v, "from the shim's version event"))
    }

    /// `cudnnGetCudartVersion()` of a cuDNN copy, as a version (13000 → 13.0):
    /// its answer in the process, else in a probe process.
    pub fn cuda_build(&self) -> Option<Ver> {
        let v = self
            .query
            .as_ref()
            .and_then(|q| q.cuda_build)
            .or_else(|| self.found.as_ref()?.cuda_build)?;
        (v > 0).then(|| Ver::from_cuda_int(v as u64))
    }

    /// The raw `cudnnGetCudartVersion()` value behind [`Lib::cuda_build`],
    /// and how it was read.
    pub fn cuda_build_raw(&self) -> Option<(i64, &'static str)> {
        if let Some(v) = self.query.as_ref().and_then(|q| q.cuda_build) {
            return Some((v, "reported by the library"));
        }
        let f = self.found.as_ref()?;
        Some((f.cuda_build?, f.source.words()))
    }

    /// `cudnnGetMaxDeviceVersion()` of a cuDNN copy (1210 → SM 12.1).
    pub fn max_device(&self) -> Option<Ver> {
        let v = self
            .query
            .as_ref()
            .and_then(|q| q.max_device)
            .or_else(|| self.found.as_ref()?.max_device)?;
        (v > 0).then(|| Ver::from_sm_int(v as u64))
    }

    /// A text for the version: `9.19.0`, `9.x` (the major only), or None.
    pub fn version_text(&self) -> Option<String> {
        if let Some((v, _)) = self.version() {
            return Some(v.to_string());
        }
        if let Some(d) = &self.driver_file {
            return Some(format!("driver {}", d.driver_text()));
        }
        self.major.map(|m| format!("{m}.x"))
    }
}

/// A CUDA error code seen in the process: a call's status or a text in stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    pub value: i64,
    /// The function that returned it (`cuInit`), when from a call.
    pub func: Option<String>,
    /// The library that served the call.
    pub lib: Option<String>,
    /// The stderr line, when from a text.
    pub text: Option<String>,
    pub seq: Option<u64>,
}

/// A framework (or cuDNN) message found in stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageMatch {
    /// Index into `Knowledge::messages`.
    pub rule: usize,
    /// The matched text.
    pub text: String,
    /// The whole line(s) the match is on.
    pub lines: String,
    /// Named groups that matched.
    pub groups: BTreeMap<String, String>,
    /// How many times this text was printed (frameworks log a failed
    /// check once per attempt).
    pub count: usize,
}

/// Everything the rules know about one process image.
pub struct Facts<'a> {
    pub img: &'a Image,
    /// CUDA-family objects that entered the process, in load order.
    pub libs: Vec<Lib<'a>>,
    pub failed: Vec<&'a Failed>,
    /// The `version` events (`docs/versions-and-calls.md`).
    pub versions: Vec<VersionEvent>,
    /// The program's recorded calls.
    pub calls: Vec<CallEvent>,
    /// The program's stderr (its last [`MAX_STDERR`] bytes). The rules read
    /// what was found in it (`observed`, messages); kept for rules to come.
    #[allow(dead_code)]
    pub stderr: Option<&'a str>,
    pub observed: Vec<Observed>,
    pub messages: Vec<MessageMatch>,
    /// Objects that carry a CUDA runtime linked into them
    /// (`analysis::files`).
    pub static_runtimes: Vec<StaticRuntime>,
}

pub use crate::model::{basename, dirname};

/// The first numeric component after `.so.` in a file name.
pub fn soname_major(name: &str) -> Option<u32> {
    let first = *name_version::so_numbers(name).first()?;
    if first.len() > 9 {
        return None;
    }
    first.parse().ok()
}

/// What the program's stderr says: CUDA error texts and the framework
/// messages of the knowledge tables. The launcher captures one stderr for
/// the whole run, so it is read once and shared by every image it is
/// explained in.
#[derive(Debug, Clone)]
pub struct StderrFacts<'a> {
    /// Its last [`MAX_STDERR`] bytes.
    pub text: &'a str,
    pub observed: Vec<Observed>,
    pub messages: Vec<MessageMatch>,
}

impl<'a> StderrFacts<'a> {
    pub fn new(stderr: &'a str, k: &Knowledge) -> Self {
        let text = if stderr.len() <= MAX_STDERR {
            stderr
        } else {
            let mut cut = stderr.len() - MAX_STDERR;
            while !stderr.is_char_boundary(cut) {
                cut += 1;
            }
            &stderr[cut..]
        };
        let mut observed: Vec<Observed> = Vec::new();
        for e in &k.errors {
            for m in &e.messages {
                // memmem, not `str::find` (a two-way searcher per call):
                // this runs for every stderr that is not blank.
                if let Some(i) = memchr::memmem::find(text.as_bytes(), m.as_bytes()) {
                    let line = line_at(text, i, i + m.len());
                    if !observed
                        .iter()
                        .any(|o| o.value == e.value && o.text.as_deref() == Some(&line))
                    {
                        observed.push(Observed {
                            value: e.value,
                            func: None,
                            lib: None,
                            text: Some(line),
                            seq: None,
                        });
                    }
                    break;
                }
            }
        }
        let messages = messages_in(text, k);
        StderrFacts {
            text,
            observed,
            messages,
        }
    }
}

/// Where a message rule matched: (rule index, start, end).
type Span = (usize, usize, usize);

/// The framework messages in `text`: each distinct text once per rule
/// (at most [`MAX_MATCHES`] per rule) with how often it was printed. A
/// match that lies inside another rule's match is left to that one: the
/// outer message says more (cuDNN 8's "Could not load library X. Error:
/// <glibc's undefined symbol …>", an ImportError around a dlerror); for
/// two matches of one span the rule listed first wins.
/// Only the rules that can match somewhere in the text are compiled and
/// run ([`Knowledge::messages_possibly_in`]): the others match nothing.
fn messages_in(text: &str, k: &Knowledge) -> Vec<MessageMatch> {
    // No message can be in an empty (or blank) stderr: returning at once
    // keeps the patterns uncompiled (`LazyRegex`), the common case of a
    // clean run.
    if text.trim().is_empty() {
        return Vec::new();
    }
    messages_of_rules(text, k, k.messages_possibly_in(text))
}

/// [`messages_in`] with the rules `rules` (indices into `k.messages`).
fn messages_of_rules(text: &str, k: &Knowledge, rules: Vec<usize>) -> Vec<MessageMatch> {
    let mut spans: Vec<Span> = Vec::new();
    for ri in rules {
        let rule = &k.messages[ri];
        spans.extend(rule.regex.find_iter(text).map(|m| (ri, m.start(), m.end())));
    }
    let mut messages: Vec<MessageMatch> = Vec::new();
    for (ri, start, end) in outermost(spans) {
        let whole = &text[start..end];
        if let Some(m) = messages
            .iter_mut()
            .find(|m| m.rule == ri && m.text == whole)
        {
            m.count += 1;
            continue;
        }
        if messages.iter().filter(|m| m.rule == ri).count() >= MAX_MATCHES {
            continue;
        }
        let rule = &k.messages[ri];
        let Some(c) = rule.regex.captures_at(text, start) else {
            continue;
        };
        let groups = rule
            .regex
            .capture_names()
            .flatten()
            .filter_map(|n| c.name(n).map(|g| (n.to_string(), g.as_str().to_string())))
            .collect();
        messages.push(MessageMatch {
            rule: ri,
            text: whole.to_string(),
            lines: line_at(text, start, end),
            groups,
            count: 1,
        });
    }
    messages
}

/// The spans that lie inside no other, in text order: sorted by start,
/// longer first (then by rule), a span is inside an earlier one exactly
/// when it ends no later than the furthest end seen so far.
fn outermost(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_by_key(|&(ri, start, end)| (start, std::cmp::Reverse(end), ri));
    let mut furthest = 0;
    let mut seen = false;
    spans
        .into_iter()
        .filter(|&(_, _, end)| {
            let inside = seen && end <= furthest;
            if !inside {
                furthest = furthest.max(end);
                seen = true;
            }
            !inside
        })
        .collect()
}

impl<'a> Facts<'a> {
    /// The facts of `img`; `stderr`: what the program's standard error says,
    /// when the launcher captured it.
    pub fn new(img: &'a Image, stderr: Option<&StderrFacts<'a>>) -> Self {
        let (versions, calls) = events::of_image(img);
        let mut libs: Vec<Lib<'a>> = Vec::new();
        // Identities seen, hashed: a long trace has many loads.
        let mut known: std::collections::HashSet<String> = std::collections::HashSet::new();
        let firsts = img.loads.iter().filter(|l| l.new);
        let reused = img.loads.iter().filter(|l| !l.new);
        for l in firsts.chain(reused) {
            let Some(fam) = l.family.as_deref() else {
                continue;
            };
            let mut lib = make_lib(l, fam, img, &versions);
            lib.called = version_read(&lib, &calls);
            let id = format!("{}@{}", lib.identity(), l.lmid);
            if !l.new && known.contains(&id) {
                continue;
            }
            if !l.new && libs.iter().any(|x| x.is(&l.path) && x.load.lmid == l.lmid) {
                continue;
            }
            known.insert(id);
            libs.push(lib);
        }
        libs.sort_by_key(|l| l.load.seq);
        let mut observed = Vec::new();
        for c in &calls {
            // cuDNN statuses are decoded by CDT007 with cuDNN's own numbering.
            if c.func.starts_with("cudnn") {
                continue;
            }
            if let Some(s) = c.status.filter(|&s| s != 0) {
                observed.push(Observed {
                    value: s,
                    func: Some(c.func.clone()),
                    lib: c.lib.clone(),
                    text: None,
                    seq: Some(c.seq),
                });
            }
        }
        for v in &versions {
            // The shim's own cuDriverGetVersion / cudaRuntimeGetVersion
            // failed. (An answer the program got is a call event as well.)
            if v.asked_by.as_deref() == Some("program") {
                continue;
            }
            if let Some(s) = v.status.filter(|&s| s != 0) {
                observed.push(Observed {
                    value: s,
                    func: Some(match v.family.as_deref() {
                        Some("cuda") => "cuDriverGetVersion (the shim's query)".to_string(),
                        _ => "cudaRuntimeGetVersion (the shim's query)".to_string(),
                    }),
                    lib: Some(v.path.clone()),
                    text: None,
                    seq: Some(v.seq),
                });
            }
        }
        let mut messages = Vec::new();
        if let Some(e) = stderr {
            observed.extend(e.observed.iter().cloned());
            messages = e.messages.clone();
        }
        Facts {
            img,
            libs,
            failed: img.failed.iter().collect(),
            versions,
            calls,
            stderr: stderr.map(|e| e.text),
            observed,
            messages,
            static_runtimes: Vec::new(),
        }
    }

    /// Libraries of a family.
    pub fn family(&self, fam: &str) -> impl Iterator<Item = &Lib<'a>> {
        let fam = fam.to_string();
        self.libs.iter().filter(move |l| l.family == fam)
    }

    /// The library a path names.
    pub fn lib_at(&self, path: &str) -> Option<&Lib<'a>> {
        self.libs.iter().find(|l| l.is(path))
    }

    /// Calls of a function.
    pub fn calls_of(&self, func: &str) -> impl Iterator<Item = &CallEvent> {
        let func = func.to_string();
        self.calls.iter().filter(move |c| c.func == func)
    }

    /// The cuDNN version the program read through `cudnnGetVersion` or
    /// `cudnnGetProperty` (what frameworks compare with their build), and
    /// the copy that answered.
    pub fn cudnn_runtime_seen(&self) -> Option<(Ver, Option<String>)> {
        if let Some(c) = self
            .calls_of("cudnnGetVersion")
            .find(|c| c.int_value().is_some_and(|v| v > 0))
        {
            let v = Ver::from_cudnn_int(c.int_value()? as u64);
            return Some((v, c.lib.clone()));
        }
        let mut parts: BTreeMap<Option<String>, [Option<i64>; 3]> = BTreeMap::new();
        for c in self.calls_of("cudnnGetProperty").filter(|c| c.ok()) {
            if let (Some(p), Some(v)) = (c.prop, c.int_value()) {
                if (0..3).contains(&p) {
                    parts.entry(c.lib.clone()).or_default()[p as usize] = Some(v);
                }
            }
        }
        parts.into_iter().find_map(|(lib, p)| match p {
            [Some(a), Some(b), Some(c)] => Some((Ver(vec![a as u32, b as u32, c as u32]), lib)),
            _ => None,
        })
    }

    /// The host name the trace was taken on.
    pub fn host(&self) -> Option<&str> {
        self.img.header.hostname.as_deref()
    }

    /// The facts with what the machine says about the image's files
    /// (versions found outside the process).
    pub fn with_files(mut self, files: Option<&ImageFiles>) -> Self {
        if let Some(files) = files {
            for lib in &mut self.libs {
                let f = files.versions.get(&lib.load.path).or_else(|| {
                    lib.load
                        .realpath
                        .as_ref()
                        .and_then(|r| files.versions.get(r))
                });
                lib.found = f.cloned();
            }
            self.static_runtimes = files.static_runtimes.clone();
        }
        self
    }
}

fn make_lib<'a>(l: &'a Load, fam: &str, img: &'a Image, versions: &[VersionEvent]) -> Lib<'a> {
    let best = name_version::of_library(&l.path, l.realpath.as_deref());
    let (name_version, driver_file) = match &best {
        Some(NameVersion::Full(v)) => (Ver::parse(v), None),
        Some(NameVersion::Driver(v)) => (None, Ver::parse(v)),
        _ => (None, None),
    };
    let major = if fam == "cuda" {
        None
    } else {
        soname_major(&l.path).or_else(|| l.realpath.as_deref().and_then(soname_major))
    };
    let stem = crate::model::stem(l.realpath.as_deref().unwrap_or(&l.path)).to_string();
    let stem = if stem.is_empty() {
        crate::model::stem(&l.path).to_string()
    } else {
        stem
    };
    // The shim may write a file-name event first and the library's own
    // answer later: the answer wins.
    let mine =
        |v: &&VersionEvent| v.path == l.path || l.realpath.as_deref() == Some(v.path.as_str());
    let query = versions
        .iter()
        .filter(mine)
        .find(|v| v.source.as_deref() == Some("query"))
        .or_else(|| versions.iter().find(mine))
        .cloned();
    // Unloads are folded (`model::fold`): a group whose first unload came
    // before this load but whose last came after stands for one after it,
    // at its last seq at the latest.
    let unloaded_at = img
        .unloads
        .iter()
        .filter(|u| u.last_seq > l.seq && u.lmid == l.lmid && (u.path == l.path))
        .map(|u| if u.seq > l.seq { u.seq } else { u.last_seq })
        .min();
    Lib {
        load: l,
        family: fam.to_string(),
        stem,
        major,
        name_version,
        driver_file,
        query,
        found: None,
        called: None,
        unloaded_at,
    }
}

/// The version the program read from `lib` through `cudnnGetVersion`
/// (frameworks call it at start-up): the library's own answer, for the
/// libraries whose answer is their own version (cuDNN 7's single library,
/// v8's ops_infer, v9's graph; a v8/v9 dispatcher answers with the
/// sub-library's version, [R2][E3] [E5], so its answer does not date it).
fn version_read(lib: &Lib<'_>, calls: &[CallEvent]) -> Option<Ver> {
    let own_answer = lib.family == "cudnn"
        && (lib.major == Some(7)
            || matches!(lib.stem.as_str(), "libcudnn_graph" | "libcudnn_ops_infer"));
    if !own_answer {
        return None;
    }
    calls
        .iter()
        .filter(|c| c.func == "cudnnGetVersion")
        .filter(|c| c.lib.as_deref().is_some_and(|p| lib.is(p)))
        .find_map(|c| c.int_value().filter(|&v| v > 0))
        .map(|v| Ver::from_cudnn_int(v as u64))
}

/// The full line(s) of `text` around byte range `a..b`, at most 600 chars.
pub fn line_at(text: &str, a: usize, b: usize) -> String {
    let start = text[..a].rfind('\n').map_or(0, |i| i + 1);
    let end = text[b..].find('\n').map_or(text.len(), |i| b + i);
    let line = text[start..end].trim_end_matches('\r');
    if line.chars().count() > 600 {
        let mut s: String = line.chars().take(600).collect();
        s.push('…');
        s
    } else {
        line.to_string()
    }
}

/// The message tables (`frameworks.toml`) as the rules read stderr: each
/// real example found by its own rule alone, repeats counted, inner
/// matches left to the outer one, and the quoted texts verbatim.
#[cfg(test)]
mod tests {
    use super::{messages_in, messages_of_rules, MessageMatch, StderrFacts};
    use crate::analysis::findings::knowledge::{message_version, Knowledge};
    use std::collections::BTreeMap;

    /// The messages in `text` as every rule, compiled and run, finds them:
    /// what the prefiltered path must find.
    fn every_rule(k: &Knowledge, text: &str) -> Vec<MessageMatch> {
        if text.trim().is_empty() {
            return Vec::new();
        }
        messages_of_rules(text, k, (0..k.messages.len()).collect())
    }

    /// The prefilter finds exactly what running every pattern finds, for
    /// every example of `frameworks.toml` alone, inside ordinary output,
    /// all of them in one text, and each with its needles' neighbourhood
    /// changed (a letter dropped from the front or the back, so that some
    /// needles no longer occur).
    #[test]
    fn the_prefilter_finds_what_every_pattern_finds() {
        let k = Knowledge::embedded().unwrap();
        let examples: Vec<&str> = k
            .messages
            .iter()
            .flat_map(|m| m.spec.example.iter().map(|e| e.text.as_str()))
            .collect();
        let mut texts: Vec<String> = Vec::new();
        for ex in &examples {
            texts.push(ex.to_string());
            texts.push(format!(
                "INFO starting\nwarning: {ex} (retrying)\n\nDone.\n"
            ));
            let chars: Vec<char> = ex.chars().collect();
            for cut in [1, chars.len() / 3, chars.len() / 2, chars.len() - 1] {
                texts.push(chars[cut..].iter().collect());
                texts.push(chars[..cut].iter().collect());
                let mut gap = chars.clone();
                gap.remove(cut);
                texts.push(gap.into_iter().collect());
            }
        }
        texts.push(examples.join("\n"));
        texts.push(examples.join(""));
        let mut found = 0;
        for t in &texts {
            let fast = messages_in(t, &k);
            assert_eq!(fast, every_rule(&k, t), "{t}");
            found += fast.len();
        }
        assert!(found >= examples.len() * 2, "{found}");
        // Every built-in pattern has needles, or it would be compiled and
        // run at the end of every run that printed anything.
        for m in &k.messages {
            assert!(m.needles.is_some(), "{}: no needle", m.spec.id);
        }
    }

    /// Ordinary stderr (a few KB without any known message) compiles no
    /// pattern: the launcher's end-of-run cost when a program logs.
    #[test]
    fn ordinary_stderr_compiles_no_pattern() {
        // As the launcher loads them (`embedded()` validates, compiling all).
        let (k, warnings) = Knowledge::load_from(None);
        assert!(warnings.is_empty(), "{warnings:?}");
        let line = "2026-11-24 19:30:00,123 INFO trainer.py:88] epoch 3/10 step 1200: loss=0.3125 lr=3e-4 (12.4 it/s); /usr/lib/python3/dist-packages/torch/utils/data/dataloader.py:558: UserWarning: This DataLoader will create 4 worker processes\n";
        let text = line.repeat(4096 / line.len() + 1);
        assert!(StderrFacts::new(&text, &k).messages.is_empty());
        assert!(k.messages_possibly_in(&text).is_empty());
        assert!(k.messages.iter().all(|m| !m.regex.is_compiled()));
        // A known message compiles its own pattern, and not every other.
        let ex = &k.messages[0].spec.example[0].text;
        let found = StderrFacts::new(&format!("{text}{ex}\n"), &k).messages;
        assert_eq!(found.len(), 1);
        let compiled = k.messages.iter().filter(|m| m.regex.is_compiled()).count();
        assert!((1..=3).contains(&compiled), "{compiled} patterns compiled");
    }

    /// The messages found in `text` as the rules see them (a match inside
    /// another rule's is left to that one), with the version groups decoded.
    /// Every text goes both ways here: the rules the needles leave, and
    /// every rule (the prefilter must never change what is found).
    fn matches(k: &Knowledge, text: &str) -> Vec<(String, BTreeMap<String, String>)> {
        let found = StderrFacts::new(text, k).messages;
        assert_eq!(found, every_rule(k, text), "{text}");
        found
            .into_iter()
            .map(|mm| {
                let m = &k.messages[mm.rule];
                let g = mm
                    .groups
                    .into_iter()
                    .map(|(name, x)| {
                        let v = if name == "build" || name == "runtime" {
                            message_version(m.spec.version_format.as_deref(), &x)
                                .map(|v| v.to_string())
                                .unwrap_or_default()
                        } else {
                            x
                        };
                        (name, v)
                    })
                    .collect();
                (m.spec.id.clone(), g)
            })
            .collect()
    }

    fn one(k: &Knowledge, text: &str) -> (String, BTreeMap<String, String>) {
        let mut v = matches(k, text);
        assert_eq!(v.len(), 1, "{text}: {v:?}");
        v.remove(0)
    }

    /// Every example of `frameworks.toml` (each a real text, its source in
    /// the comment above it) is found, as the rules read stderr, by its own
    /// rule and by no other: a text two rules explain would give two
    /// findings for one message.
    #[test]
    fn every_example_is_explained_by_its_own_rule_alone() {
        let k = Knowledge::embedded().unwrap();
        let mut n = 0;
        for m in &k.messages {
            for ex in &m.spec.example {
                let found = matches(&k, &ex.text);
                let ids: Vec<&str> = found.iter().map(|(id, _)| id.as_str()).collect();
                assert_eq!(ids, [m.spec.id.as_str()], "{}", ex.text);
                n += 1;
            }
        }
        assert!(n >= 40, "{n} examples");
    }

    /// One finding per message with the number of times it was printed;
    /// a match inside another rule's (glibc's symbol error inside cuDNN 8's
    /// "Could not load library") is explained by the outer one.
    #[test]
    fn repeats_are_counted_and_inner_matches_left_to_the_outer_one() {
        let k = Knowledge::embedded().unwrap();
        let line = "E1027 15:11:27.184481 3266602 cuda_dnn.cc:456] Loaded runtime CuDNN library: 9.10.1 but source was compiled with: 9.13.1.  CuDNN library needs to have matching major version and equal or higher minor version.\n";
        let found = StderrFacts::new(&line.repeat(4), &k).messages;
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].count, 4);
        let text = "Could not load library libcudnn_cnn_infer.so.8. Error: /usr/lib/x86_64-linux-gnu/libcudnn_cnn_infer.so.8: undefined symbol: _ZN5cudnn3ops18GetInternalStreamsEP12cudnnContextiPP11CUstream_st, version libcudnn_ops_infer.so.8\nAborted (core dumped)\nImportError: libcuda.so.1: cannot open shared object file: No such file or directory";
        let ids: Vec<String> = matches(&k, text).into_iter().map(|(id, _)| id).collect();
        assert_eq!(ids, ["cudnn8-could-not-load", "dlerror-cannot-open"]);
    }

    /// The messages quoted in [R19][R21][R24][R27][R28] (and [R17][E6][E7] / E6 for cuDNN's
    /// own), verbatim, match exactly one rule and give the right versions.
    #[test]
    fn compat_facts_messages_verbatim() {
        let k = Knowledge::embedded().unwrap();
        // [R24] PyTorch (note the double space in "compiled  against").
        let (id, g) = one(&k, "cuDNN version incompatibility: PyTorch was compiled  against (9, 19, 0) but found runtime version (9, 14, 0). PyTorch already comes bundled with cuDNN. One option to resolving this error is to ensure PyTorch can find the bundled cuDNN. ");
        assert_eq!(id, "pytorch-cudnn-version");
        assert_eq!(
            (g["build"].as_str(), g["runtime"].as_str()),
            ("9.19.0", "9.14.0")
        );
        // [R19][R21][R23] TensorFlow's old "compatibility version" form.
        let (id, g) = one(&k, "Loaded runtime CuDNN library: 7101 (compatibility version 7100) but source was compiled with 7004 (compatibility version 7000).  If using a binary install, upgrade your CuDNN library to match.  If building from sources, make sure the library loaded at runtime matches a compatible version specified during compile configuration.");
        assert_eq!(id, "tensorflow-compatibility-version");
        assert_eq!(
            (g["build"].as_str(), g["runtime"].as_str()),
            ("7.0.4", "7.1.1")
        );
        // [R19][R21][R23] XLA's current form.
        let (id, g) = one(&k, "Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.8.0.  CuDNN library needs to have matching major version and equal or higher minor version. If using a binary install, upgrade your CuDNN library.  If building from sources, make sure the library loaded at runtime is compatible with the version specified during compile configuration.");
        assert_eq!(id, "xla-cudnn-version");
        assert_eq!(
            (g["build"].as_str(), g["runtime"].as_str()),
            ("9.8.0", "9.1.0")
        );
        // [R19][R21][R23]: JAX surfaces XLA's failure as this.
        assert_eq!(
            one(&k, "FAILED_PRECONDITION: DNN library initialization failed").0,
            "xla-dnn-init-failed"
        );
        // [R27] JAX. [R27] does not show the numbers ("Version JAX was built
        // against: …"); the source [R27] prints the integers of cudnnGetVersion.
        let (id, g) = one(&k, "Outdated cuDNN installation found.\nVersion JAX was built against: 90800\nMinimum supported: 908\nInstalled version: 90100\nThe local installation version must be no lower than 908.");
        assert_eq!(id, "jax-outdated-cudnn");
        assert_eq!(
            (
                g["build"].as_str(),
                g["runtime"].as_str(),
                g["minimum"].as_str()
            ),
            ("9.8.0", "9.1.0", "908")
        );
        assert!(matches(&k, "Outdated cuDNN installation found.\nVersion JAX was built against: …\nMinimum supported: …\nInstalled version: …\nThe local installation version must be no lower than ….").is_empty());
        assert_eq!(
            one(&k, "Unable to load cuDNN. Is it installed?").0,
            "jax-unable-to-load-cudnn"
        );
        // [R28] ONNX Runtime, the Linux failure pair.
        let (id, g) = one(&k, "… provider_bridge_ort.cc … Failed to load library libonnxruntime_providers_cuda.so with error: libcudnn.so.9: cannot open shared object file: No such file or directory");
        assert_eq!(id, "onnxruntime-failed-to-load");
        assert_eq!(
            (g["library"].as_str(), g["missing"].as_str()),
            ("libonnxruntime_providers_cuda.so", "libcudnn.so.9")
        );
        let (id, g) = one(&k, "… onnxruntime_pybind_state.cc … Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*. Please install all dependencies as mentioned in the GPU requirements page (https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements), make sure they're in the PATH, and that your GPU is supported.");
        assert_eq!(id, "onnxruntime-require");
        assert_eq!(
            (g["cudnn_major"].as_str(), g["cuda_major"].as_str()),
            ("9", "12")
        );
        let (_, g) = one(
            &k,
            "Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 13.*.",
        );
        assert_eq!(g["cuda_major"], "13");
        let (_, g) = one(&k, "… provider_bridge_ort.cc … Failed to load library libonnxruntime_providers_cuda.so with error: libcudnn_adv.so.9: cannot open shared object file: No such file or directory");
        assert_eq!(g["missing"], "libcudnn_adv.so.9");
        // [R19][R21][R23] TSL's dso_loader.
        let (id, g) = one(
            &k,
            "Could not load dynamic library 'libcudnn.so.8'; dlerror: …; LD_LIBRARY_PATH: …",
        );
        assert_eq!(
            (id.as_str(), g["missing"].as_str()),
            ("tensorflow-dso-loader", "libcudnn.so.8")
        );
        // [R17][E6][E7] / E6: cuDNN's own dispatcher messages.
        let (id, g) = one(&k, "Unable to load any of {libcudnn_graph.so.9.12.0, libcudnn_graph.so.9.12, libcudnn_graph.so.9, libcudnn_graph.so}");
        assert_eq!(id, "cudnn9-unable-to-load");
        assert_eq!(g["names"], "libcudnn_graph.so.9.12.0, libcudnn_graph.so.9.12, libcudnn_graph.so.9, libcudnn_graph.so");
        let (_, g) = one(
            &k,
            "Could not load library libcudnn_ops_infer.so.8. Error: …",
        );
        assert_eq!(g["library"], "libcudnn_ops_infer.so.8");
        // [R17][E6][E7] / R46 and R41.
        let (id, g) = one(&k, "…/nvidia/cudnn/lib/libcudnn_cnn_infer.so.8: undefined symbol: _ZN11nvrtcHelper4loadEb, version libcudnn_ops_infer.so.8");
        assert_eq!(
            (id.as_str(), g["tag"].as_str()),
            ("glibc-symbol-version", "libcudnn_ops_infer.so.8")
        );
        assert_eq!(
            one(
                &k,
                "RuntimeError: cuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"
            )
            .0,
            "cudnn-sublibrary-version-mismatch"
        );
        // Ordinary output matches nothing, nor TF's notes about optional
        // libraries (TensorRT, CUPTI) that healthy installs lack.
        for quiet in [
            "2023-01-01 W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: No such file or directory",
            "Could not load dynamic library 'libcupti.so.11.2'; dlerror: libcupti.so.11.2: cannot open shared object file: No such file or directory",
            "Epoch 1/10: loss 0.31",
            "Loaded cuDNN version 91900",
            "cudnnCreate ok",
            "",
        ] {
            assert!(matches(&k, quiet).is_empty(), "{quiet}");
        }
    }
}
