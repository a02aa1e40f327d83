//! The text summary of a trace set: the process tree, and per process the
//! CUDA-family libraries (path, version, why, who asked), failed loads, the
//! pin's decisions and shim notes. Shared by the launcher and `report`.
//!
//! It writes what the analysis found (`analysis::{tree, libraries,
//! failures, pin}`); the findings have their own section
//! (`render::findings`).

use super::style::{finish, paint, wrap, Role};
use super::text::{argv_text, esc, legend};
use crate::analysis::failures::{
    blocked_by_pin, compact_tried, grouped_failures_with, so_stem, Variants,
};
use crate::analysis::files::{ImageFiles, StartupFailure, StaticRuntime};
use crate::analysis::libraries::{libraries_with, other_count, LibraryView};
use crate::analysis::pin::pin_view;
use crate::analysis::{Link, ProcessTree};
use crate::machine::Copy;
use crate::model::name_version::NameVersion;
use crate::model::Ver;
use crate::model::{
    basename, dirname, Failed, Image, LauncherRecord, OutlivedRecord, PinRecord, TraceSet,
};
use cudnn_trace_format::{reason, via};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

/// Appends one line of the summary, its control characters escaped.
fn line(out: &mut String, s: &str) {
    out.push_str(&esc(s));
    out.push('\n');
}

/// Shortens object paths to their file name where that is unambiguous among
/// every path this image's summary mentions.
struct Shortener {
    names: HashMap<String, BTreeSet<String>>,
    /// A long directory prefix shown as `…/` (see [`common_prefix`]).
    prefix: Option<String>,
}

impl Shortener {
    fn new(img: &Image, prefix: Option<&str>) -> Self {
        // A path and its resolved path (`…/torch/lib/../../nvidia/x.so` and
        // `…/nvidia/x.so`) are one object: count it once.
        let canon: HashMap<&str, &str> = img
            .loads
            .iter()
            .filter_map(|l| Some((l.path.as_str(), l.realpath.as_deref()?)))
            .collect();
        let mut names: HashMap<String, BTreeSet<String>> = HashMap::new();
        let mut add = |p: &str| {
            if p.contains('/') {
                let key = canon.get(p).copied().unwrap_or(p);
                names
                    .entry(basename(p).to_string())
                    .or_default()
                    .insert(key.to_string());
            }
        };
        if let Some(e) = &img.header.exe {
            add(e);
        }
        for l in &img.loads {
            add(&l.path);
            l.realpath.as_deref().map(&mut add);
            l.requester.as_deref().map(&mut add);
            l.reason_owner.as_deref().map(&mut add);
        }
        for f in &img.failed {
            f.ev.requester.as_deref().map(&mut add);
        }
        Shortener {
            names,
            prefix: prefix.map(str::to_string),
        }
    }

    /// An object's file name when that is unambiguous, else its path.
    fn short(&self, p: &str) -> String {
        let b = basename(p);
        match self.names.get(b) {
            Some(set) if set.len() == 1 && !b.is_empty() => b.to_string(),
            _ => self.abbr(p),
        }
    }

    /// A path with the common prefix written `…/`.
    fn abbr(&self, p: &str) -> String {
        match &self.prefix {
            Some(pre) if p.starts_with(pre.as_str()) && p.len() > pre.len() => {
                format!("…/{}", &p[pre.len()..])
            }
            _ => p.to_string(),
        }
    }
}

/// Who asked, as the summary names it: the main program (the empty
/// requester), else the object's short name.
fn requester_name(sh: &Shortener, requester: Option<&str>) -> Option<String> {
    match requester? {
        "" => Some("the main program".to_string()),
        r => Some(sh.short(r)),
    }
}

fn requester_text(sh: &Shortener, via_: &str, requester: Option<&str>) -> String {
    let who = requester_name(sh, requester);
    let by = |verb: &str| match &who {
        Some(who) => format!("{verb} by {who}"),
        None => verb.to_string(),
    };
    match via_ {
        via::NEEDED => by("needed"),
        via::DLOPEN => by("dlopen"),
        via::DLMOPEN => by("dlmopen"),
        via::PRELOAD => "LD_PRELOAD".into(),
        via::STARTUP => "startup".into(),
        via::LOADER => by("loader request"),
        other => by(other),
    }
}

fn why_text(sh: &Shortener, v: &LibraryView) -> String {
    let mut s = match (v.reason.as_str(), v.reason_owner.as_deref()) {
        (reason::RPATH | reason::RUNPATH | reason::RPATH_OR_RUNPATH, Some(owner))
            if !owner.is_empty() =>
        {
            format!("{} of {}", v.reason, sh.short(owner))
        }
        (reason::PATH, _) => "path given".into(),
        (reason::PIN, _) => match v.name.as_deref() {
            // The whole path: that it named another copy is the point.
            Some(n) if n.contains('/') => format!("pinned, asked for {}", sh.abbr(n)),
            Some(n) if Some(n) != Some(basename(&v.path)) => format!("pinned, asked for {n}"),
            _ => "pinned".into(),
        },
        (r, _) => r.to_string(),
    };
    if v.lmid != 0 {
        let _ = write!(s, " [namespace {}]", v.lmid);
    }
    s
}

pub use super::style::TextOptions;

/// A long directory prefix that many paths of the summary share (say
/// `/opt/venv/lib/python3.12/site-packages/`), to write as `…/` with one
/// legend line. None when no prefix is worth it.
pub fn common_prefix(set: &TraceSet, all: bool) -> Option<String> {
    // Distinct library and requester paths; the many candidates of failed
    // requests would otherwise outvote them.
    let mut paths: BTreeSet<&str> = BTreeSet::new();
    let mut classes = std::collections::HashSet::new();
    for img in &set.images {
        // Alike images have the same loads.
        if img.class != crate::model::image::UNIQUE && !classes.insert(img.class) {
            continue;
        }
        for l in img.loads.iter().filter(|l| all || l.family.is_some()) {
            paths.insert(&l.path);
            paths.extend(l.requester.as_deref());
        }
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for p in &paths {
        for (i, c) in p.char_indices() {
            // Directory prefixes of at least 24 characters, up to a '/'.
            if c == '/' && i + 1 >= 24 && i + 1 < p.len() {
                *counts.entry(&p[..=i]).or_default() += 1;
            }
        }
    }
    // The one that covers the most paths; the longest of those.
    counts
        .into_iter()
        .filter(|&(_, n)| n >= 4)
        .max_by_key(|&(pre, n)| (n, pre.len(), std::cmp::Reverse(pre)))
        .map(|(pre, _)| pre.to_string())
}

/// The trace set and its tree, as the summary walks them.
struct View<'a> {
    set: &'a TraceSet,
    tree: &'a ProcessTree,
    /// What the machine says about each image's files (may be empty).
    files: &'a [ImageFiles],
}

/// Whether an image has something to show beyond its header line.
fn interesting(a: &View<'_>, i: usize, all: bool) -> bool {
    let img = &a.set.images[i];
    a.tree.top[i]
        || img.loads.iter().any(|l| all || l.family.is_some())
        || !img.failed.is_empty()
        || img.shown_notes().next().is_some()
}

/// The one line that says what a full disk cost, where.
fn loss_line(l: &crate::model::trace::Loss) -> String {
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut what = vec![];
    if l.events > 0 {
        what.push(format!(
            "{} of {} could not be written and are lost",
            plural(l.events, "event", "events"),
            plural(l.images as u64, "process image", "process images")
        ));
    }
    if l.empty_files > 0 {
        what.push(format!(
            "{} stayed empty",
            plural(l.empty_files as u64, "trace file", "trace files")
        ));
    }
    if what.is_empty() {
        what.push("a start-up window could not be allocated".into());
    }
    format!(
        "trace incomplete: {} ran out of room ({}): {}",
        esc(&l.dirs.join(", ")),
        l.error.as_deref().unwrap_or("a write failed"),
        what.join("; ")
    )
}

/// One line for the processes whose glibc is too old for calls and
/// in-library versions (docs/glibc.md), instead of one note per process.
fn calls_off_line(set: &TraceSet) -> Option<String> {
    let old: Vec<&Image> = set
        .images
        .iter()
        .filter(|i| i.header.calls.as_deref() == Some("needs-glibc-2.35"))
        .collect();
    if old.is_empty() {
        return None;
    }
    let mut versions: Vec<&str> = old
        .iter()
        .filter_map(|i| i.header.glibc.as_deref())
        .collect();
    versions.sort_unstable();
    versions.dedup();
    Some(format!(
        "glibc {} ({} process image{}): calls and the libraries' own version answers are not recorded there (they need glibc 2.35); versions come from file names and the out-of-process probe",
        esc(&versions.join(", ")),
        old.len(),
        if old.len() == 1 { "" } else { "s" }
    ))
}

/// The text summary.
pub fn render(set: &TraceSet, tree: &ProcessTree, opts: &TextOptions) -> String {
    render_with(set, tree, &[], opts)
}

/// The text summary, with what the machine says about each image's files
/// (versions found outside the trace; `analysis::files`).
pub fn render_with(
    set: &TraceSet,
    tree: &ProcessTree,
    files: &[ImageFiles],
    opts: &TextOptions,
) -> String {
    let a = &View { set, tree, files };
    let mut opts = opts.clone();
    if opts.prefix.is_none() {
        opts.prefix = common_prefix(set, opts.all);
    }
    let opts = &opts;
    let n = set.images.len();
    let mut out = String::new();
    let with_cuda = set
        .images
        .iter()
        .filter(|img| img.loads.iter().any(|l| l.family.is_some()))
        .count();
    let pids: BTreeSet<(&str, u32)> = set
        .images
        .iter()
        .map(|i| (i.host(), i.header.pid))
        .collect();
    let _ = writeln!(
        out,
        "cudnn-trace: {} process{} traced ({n} program image{}), {with_cuda} image{} with CUDA libraries",
        pids.len(),
        if pids.len() == 1 { "" } else { "es" },
        if n == 1 { "" } else { "s" },
        if with_cuda == 1 { "" } else { "s" },
    );
    for loc in &opts.location {
        line(&mut out, &format!("trace: {loc}"));
    }
    if let Some(p) = &opts.prefix {
        line(&mut out, &format!("paths: …/ stands for {p}"));
    }
    if let Some(l) = set.loss() {
        line(&mut out, &loss_line(&l));
    }
    if let Some(l) = calls_off_line(set) {
        line(&mut out, &l);
    }
    for (path, rec) in &set.launchers {
        let argv = argv_text(&rec.argv, 100);
        let mut l = format!("program: {}", legend(&argv, opts.prefix.as_deref()));
        if let Some(pid) = rec.pid {
            let _ = write!(l, "  (pid {pid})");
        }
        if let Some(e) = rec.ending() {
            let _ = write!(l, "  {}", esc(&e));
        }
        line(&mut out, &l);
        for w in &rec.warnings {
            line(&mut out, &format!("warning: {w}"));
        }
        for l in outlived_lines(rec) {
            line(&mut out, &l);
        }
        if let Some(p) = &rec.pin {
            render_pin_record(set, rec, p, &mut out);
        }
        if n == 0 && rec.error.is_none() {
            line(
                &mut out,
                &format!("no trace files were written next to {}", path.display()),
            );
        }
    }
    let hosts: BTreeSet<&str> = set.images.iter().map(Image::host).collect();
    let multi_host = hosts.len() > 1;

    // Which images to show: the interesting ones and everything above them;
    // the rest is collapsed into one line unless there are only a few.
    let mut shown = vec![false; n];
    for i in 0..n {
        if interesting(a, i, opts.all) {
            // Up to the first image already shown: each is marked once.
            let mut cur = i;
            while !shown[cur] {
                shown[cur] = true;
                match a.tree.link[cur] {
                    Link::Root => break,
                    Link::Child(p) | Link::Exec(p) => cur = p,
                }
            }
        }
    }
    let hidden = shown.iter().filter(|s| !**s).count();
    if hidden <= 5 {
        shown.iter_mut().for_each(|s| *s = true);
    }
    if render_forest(a, &shown, multi_host, opts, &mut out) {
        out.push('\n');
        line(
            &mut out,
            "(processes alike but for their pids share one block: `cudnn-trace report --each` shows each one, `--json` lists them all)",
        );
    }
    if hidden > 5 {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for i in (0..n).filter(|&i| !shown[i]) {
            *counts.entry(program_name(&set.images[i])).or_default() += 1;
        }
        let mut v: Vec<(String, usize)> = counts.into_iter().collect();
        v.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        let list = v
            .iter()
            .take(8)
            .map(|(name, c)| {
                if *c > 1 {
                    format!("{name} ×{c}")
                } else {
                    name.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        let more = if v.len() > 8 { ", …" } else { "" };
        let _ = writeln!(
            out,
            "\n{hidden} other process images loaded no CUDA library: {}{more}",
            esc(&list)
        );
    }
    // Every line above escapes what came from a trace; make sure, and
    // wrap what is still too long.
    finish(&out, opts)
}

/// The processes that outlived the program: those that ended within the
/// launcher's grace time, and those still running when it stopped waiting.
fn outlived_lines(rec: &LauncherRecord) -> Vec<String> {
    let name =
        |o: &OutlivedRecord| format!("{} (pid {})", esc(o.name.as_deref().unwrap_or("?")), o.pid);
    let list = |still: bool| -> Vec<String> {
        rec.outlived
            .iter()
            .filter(|o| o.still_running == still)
            .map(name)
            .collect()
    };
    let mut out = Vec::new();
    let ended = list(false);
    if !ended.is_empty() {
        let last = rec
            .outlived
            .iter()
            .filter_map(|o| o.ended_after_ms)
            .max()
            .unwrap_or(0);
        out.push(format!(
            "outlived the program: {}, ended within {:.1} s of it",
            ended.join(", "),
            last as f64 / 1000.0
        ));
    }
    let running = list(true);
    if !running.is_empty() {
        out.push(format!(
            "still running when cudnn-trace ended: {}; what they load later is added to their \
             trace files (report the trace directory again)",
            running.join(", ")
        ));
    }
    out
}

/// The launcher's pin: what was pinned, and when the program failed, how
/// the pin may be the reason (a framework refuses a cuDNN older than its
/// build: PyTorch \[R24\], XLA \[R21\], JAX \[R27\]; data/frameworks.toml).
fn render_pin_record(set: &TraceSet, rec: &LauncherRecord, p: &PinRecord, out: &mut String) {
    let what = match &p.version {
        Some(v) => format!("cuDNN {v}"),
        None => match p.major {
            Some(m) => format!("cuDNN {m}.x"),
            None => "cuDNN".into(),
        },
    };
    let built = p
        .cuda_build
        .map(|c| format!(", built for CUDA {}", Ver::from_cuda_int(u64::from(c))))
        .unwrap_or_default();
    line(
        out,
        &format!("pin: {what}{built} from {} ({})", esc(&p.dir), esc(&p.mode)),
    );
    for w in &p.warnings {
        line(out, &format!("pin warning: {w}"));
    }
    let failed = rec.signal.is_some() || rec.exit_code.is_some_and(|c| c != 0);
    if !failed {
        return;
    }
    let outside: usize = set
        .images
        .iter()
        .filter_map(pin_view)
        .map(|v| v.outside.len())
        .sum();
    let whence = if outside == 0 {
        format!("every cuDNN file came from {}", esc(&p.dir))
    } else {
        format!("{outside} cuDNN file(s) came from elsewhere, see below")
    };
    line(
        out,
        &format!(
            "pin: the program failed while cuDNN was pinned to {what} ({whence}). If its error is a cuDNN version check"
        ),
    );
    line(
        out,
        "     (PyTorch \"compiled against (9, X, 0) but found runtime version\", XLA \"Loaded runtime CuDNN library\", JAX \"Outdated cuDNN installation\"),",
    );
    line(
        out,
        "     it is the pin's effect: frameworks need the major they were built with and at least its minor; pin that version or a newer one.",
    );
}

fn program_name(img: &Image) -> String {
    img.header
        .argv
        .first()
        .map(|a| esc(basename(a)).into_owned())
        .or_else(|| {
            img.header
                .exe
                .as_deref()
                .map(|e| esc(basename(e)).into_owned())
        })
        .unwrap_or_else(|| "?".into())
}

/// Whether an image's block would be its header line only.
fn plain(a: &View<'_>, i: usize, all: bool) -> bool {
    let img = &a.set.images[i];
    a.tree.ending[i].is_none()
        && !img.loads.iter().any(|l| all || l.family.is_some())
        && img.failed.is_empty()
        && img.shown_notes().next().is_none()
}

/// Deeper process chains are shown without further indentation.
pub const MAX_DEPTH: usize = 64;

/// For each image, how many child-process levels of shown images hang below
/// it (exec successors add none).
fn levels_below(a: &View<'_>, shown: &[bool]) -> Vec<usize> {
    let n = a.tree.link.len();
    // Parents before children, then children first.
    let mut order: Vec<usize> = Vec::with_capacity(n);
    order.extend(&a.tree.roots);
    let mut k = 0;
    while k < order.len() {
        order.extend(&a.tree.children[order[k]]);
        k += 1;
    }
    let mut levels = vec![0; n];
    for &i in order.iter().rev() {
        if !shown[i] {
            continue;
        }
        if let Link::Child(p) | Link::Exec(p) = a.tree.link[i] {
            let add = usize::from(matches!(a.tree.link[i], Link::Child(_)));
            levels[p] = levels[p].max(levels[i] + add);
        }
    }
    levels
}

/// Renders the tree, without recursion. A plain image (header only) that
/// exec'd into the next one is shown on that one's line. True when a
/// block stood for several alike images.
fn render_forest(
    a: &View<'_>,
    shown: &[bool],
    multi_host: bool,
    opts: &TextOptions,
    out: &mut String,
) -> bool {
    let mut grouped = false;
    enum Item {
        /// An image at `depth`; `chain`: names of the plain images of the
        /// same pid that exec'd into it; `alike`: the images its block
        /// stands for too ([`alike_groups`]).
        Image {
            i: usize,
            depth: usize,
            chain: Vec<(String, Link)>,
            alike: Vec<usize>,
        },
        /// The levels below [`MAX_DEPTH`], before they are shown flat.
        Deeper(usize),
    }
    let levels = levels_below(a, shown);
    let mut stack: Vec<Item> = alike_groups(a, &a.tree.roots, shown, opts)
        .into_iter()
        .rev()
        .map(|(i, alike)| Item::Image {
            i,
            depth: 0,
            chain: Vec::new(),
            alike,
        })
        .collect();
    while let Some(item) = stack.pop() {
        let (i, depth, mut chain, alike) = match item {
            Item::Image {
                i,
                depth,
                chain,
                alike,
            } => (i, depth, chain, alike),
            Item::Deeper(k) => {
                let _ = writeln!(
                    out,
                    "\n{}… {k} more level{} below, shown without further indentation",
                    "   ".repeat(MAX_DEPTH + 1),
                    if k == 1 { "" } else { "s" }
                );
                continue;
            }
        };
        if !shown[i] {
            continue;
        }
        let kids = &a.tree.children[i];
        let mut exec_next = kids
            .iter()
            .copied()
            .filter(|&c| shown[c] && matches!(a.tree.link[c], Link::Exec(_)));
        let forks = kids
            .iter()
            .any(|&c| shown[c] && matches!(a.tree.link[c], Link::Child(_)));
        if plain(a, i, opts.all) && !forks {
            if let (Some(next), None) = (exec_next.next(), exec_next.next()) {
                chain.push((program_name(&a.set.images[i]), a.tree.link[i]));
                stack.push(Item::Image {
                    i: next,
                    depth,
                    chain,
                    alike: Vec::new(),
                });
                continue;
            }
        }
        let block = Block {
            i,
            depth: depth.min(MAX_DEPTH + 1),
            chain: &chain,
            alike: &alike,
        };
        render_image(a, &block, multi_host, opts, out);
        grouped |= !alike.is_empty();
        for (c, alike) in alike_groups(a, kids, shown, opts).into_iter().rev() {
            let d = if matches!(a.tree.link[c], Link::Exec(_)) {
                depth
            } else {
                depth + 1
            };
            stack.push(Item::Image {
                i: c,
                depth: d,
                chain: Vec::new(),
                alike,
            });
        }
        if depth == MAX_DEPTH && forks {
            stack.push(Item::Deeper(levels[i]));
        }
    }
    grouped
}

/// Siblings (`list`: roots, or one image's children) in blocks: each
/// image with the images alike it that its block stands for too. Alike:
/// of the same class (`Image::class`: the same content but for pid and
/// times), leaves (nothing shown below them), roots or forked children
/// (not exec successors), hanging the same way (the same parent pid, the
/// same ending, both the launcher's program or neither). A block is where its first image is; `opts.each`: one image
/// per block.
fn alike_groups(
    a: &View<'_>,
    list: &[usize],
    shown: &[bool],
    opts: &TextOptions,
) -> Vec<(usize, Vec<usize>)> {
    let mut blocks: Vec<(usize, Vec<usize>)> = Vec::with_capacity(list.len());
    let mut at: HashMap<(u32, bool, u32, Option<&str>, bool), usize> = HashMap::new();
    for &i in list {
        let img = &a.set.images[i];
        let leaf = !a.tree.children[i].iter().any(|&c| shown[c]);
        // An exec successor is its pid's next image: alike nothing else.
        let exec = matches!(a.tree.link[i], Link::Exec(_));
        if opts.each || !shown[i] || !leaf || exec || img.class == crate::model::image::UNIQUE {
            blocks.push((i, Vec::new()));
            continue;
        }
        let key = (
            img.class,
            matches!(a.tree.link[i], Link::Root),
            img.header.ppid,
            a.tree.ending[i].as_deref(),
            a.tree.top[i],
        );
        match at.get(&key) {
            Some(&b) => blocks[b].1.push(i),
            None => {
                at.insert(key, blocks.len());
                blocks.push((i, Vec::new()));
            }
        }
    }
    blocks
}

/// One block of the summary: image `i` at `depth`, after the plain
/// images that exec'd into it (`chain`), standing for the images `alike`
/// too.
struct Block<'b> {
    i: usize,
    depth: usize,
    chain: &'b [(String, Link)],
    alike: &'b [usize],
}

fn render_image(
    a: &View<'_>,
    block: &Block<'_>,
    multi_host: bool,
    opts: &TextOptions,
    out: &mut String,
) {
    let i = block.i;
    let img = &a.set.images[i];
    let pad = "   ".repeat(block.depth);
    let body = format!("{pad}  ");
    let files = a.files.get(i);
    let libs = libraries_with(img, opts.all, files);
    let mut head = image_head(a, block, &pad, multi_host);
    head = legend(&head, opts.prefix.as_deref()).into_owned();
    let static_runtime = files.is_some_and(|f| f.static_runtimes.iter().any(|r| !r.nvidia));
    if libs.is_empty()
        && img.failed.is_empty()
        && img.shown_notes().next().is_none()
        && img.pins.is_empty()
        && !static_runtime
    {
        head.push_str("  — no CUDA library");
    }
    out.push('\n');
    line(out, &head);

    let sh = Shortener::new(img, opts.prefix.as_deref());
    if let Some(st) = files.and_then(|f| f.startup.as_ref()) {
        render_startup(&sh, img, st, &body, out);
    }
    // Libraries, one aligned row each, grouped by family.
    let variants = Variants::new(img);
    let rows: Vec<[String; 6]> = libs
        .iter()
        .map(|v| library_row(&sh, &variants, v))
        .collect();
    write_rows(&rows, &body, opts, out);
    if let Some(files) = files {
        render_static_runtimes(&sh, files, &body, out);
    }
    if !opts.all && img.header.mode == "all" {
        let others = other_count(img);
        if others > 0 {
            let _ = writeln!(
                out,
                "{body}(+{others} other librar{} recorded; `cudnn-trace report --all` lists them)",
                if others == 1 { "y" } else { "ies" }
            );
        }
    }
    if let Some(files) = files {
        render_not_asked(&sh, files, &body, out);
    }
    render_pin(&sh, img, &body, out);
    for (f, times) in grouped_failures_with(img, &variants) {
        // Shown on the pin's BLOCKED line, unless the program read the
        // loader's text, which is worth showing as it was.
        if blocked_by_pin(f) && f.errors().is_empty() {
            continue;
        }
        render_failed(&sh, f, times, &body, out);
    }
    for note in img.shown_notes() {
        line(out, &format!("{body}note    {}: {}", note.level, note.msg));
    }
}

/// The first line of an image's block: pid, how it hangs in the tree, the
/// exec chain that led to it (`chain`: the plain images before it), its
/// command line and how it ended.
fn image_head(a: &View<'_>, block: &Block<'_>, pad: &str, multi_host: bool) -> String {
    let (i, chain) = (block.i, block.chain);
    let img = &a.set.images[i];
    let h = &img.header;
    let mut head = String::new();
    let host = if multi_host {
        format!("{}:", esc(img.host()))
    } else {
        String::new()
    };
    let pid = if block.alike.is_empty() {
        format!("pid {host}{}", h.pid)
    } else {
        let mut pids: Vec<u32> = block
            .alike
            .iter()
            .map(|&j| a.set.images[j].header.pid)
            .collect();
        pids.push(h.pid);
        format!(
            "{} processes alike: pids {host}{}",
            thousands(pids.len() as u64),
            pid_ranges(&mut pids)
        )
    };
    // The line starts as the first image of the chain would.
    let (link, origin) = match chain.first() {
        Some((_, l)) => (*l, None),
        None => (a.tree.link[i], Some(h.origin.as_str())),
    };
    match link {
        Link::Exec(_) => {
            let _ = write!(head, "{pad}{pid} exec → ");
        }
        Link::Child(_) => {
            let _ = write!(head, "{pad}└ {pid} ");
        }
        Link::Root => {
            let _ = write!(head, "{pad}{pid} (ppid {}) ", h.ppid);
        }
    }
    if origin == Some("fork") {
        head.push_str("(fork) ");
    }
    if !head.ends_with("→ ") {
        head.push(' ');
    }
    // A long exec chain: its first and last images.
    const CHAIN: usize = 6;
    for (k, (name, _)) in chain.iter().enumerate() {
        if chain.len() > CHAIN && k >= CHAIN / 2 && k < chain.len() - CHAIN / 2 {
            if k == CHAIN / 2 {
                let _ = write!(head, "… {} more → ", chain.len() - CHAIN);
            }
            continue;
        }
        let _ = write!(head, "{name} → ");
    }
    if !chain.is_empty() {
        head.push_str("exec ");
    }
    head.push_str(&argv_text(&h.argv, 80));
    if let Some(exe) = &h.exe {
        if h.argv.first() != Some(exe) {
            let _ = write!(head, "  [{}]", esc(exe));
        }
    }
    if let Some(e) = &a.tree.ending[i] {
        let _ = write!(head, "  → {}", esc(e));
    }
    head
}

/// Pids as ranges, `100000–109999, 200000, …` (sorted first; at most
/// [`PID_RANGES`] ranges, then how many more pids).
pub(super) fn pid_ranges(pids: &mut [u32]) -> String {
    pids.sort_unstable();
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for &p in pids.iter() {
        match ranges.last_mut() {
            Some((_, hi)) if p == hi.saturating_add(1) || p == *hi => *hi = p,
            _ => ranges.push((p, p)),
        }
    }
    let shown: Vec<String> = ranges
        .iter()
        .take(PID_RANGES)
        .map(|&(lo, hi)| {
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}–{hi}")
            }
        })
        .collect();
    let mut s = shown.join(", ");
    if ranges.len() > PID_RANGES {
        let more: u64 = ranges[PID_RANGES..]
            .iter()
            .map(|&(lo, hi)| u64::from(hi - lo) + 1)
            .sum();
        let _ = write!(s, ", … ({} more)", thousands(more));
    }
    s
}

/// Pid ranges named in the head of a block of alike processes.
const PID_RANGES: usize = 6;

/// One library's cells: family, file, version, why, who asked, where
/// (with the name variants missed before it and its later requests).
fn library_row(sh: &Shortener, variants: &Variants<'_>, v: &LibraryView) -> [String; 6] {
    let mut dir = sh.abbr(dirname(&v.path));
    if let Some(rp) = &v.realpath {
        if rp != &v.path && dirname(rp) != dirname(&v.path) {
            let _ = write!(dir, " (→ {})", sh.abbr(rp));
        }
    }
    let mut extra = Vec::new();
    if v.count > 1 {
        extra.push(loaded_times(v));
    }
    let missed = variants.missed(v);
    if !missed.is_empty() {
        let stem = v.name.as_deref().and_then(so_stem).unwrap_or("");
        extra.push(format!(
            "after {} not found",
            short_variants(&missed, stem, 0).join(", ")
        ));
    }
    let again: u64 = v.requests.iter().map(|r| r.count).sum();
    if again > 0 {
        extra.push(format!(
            "+{} more request{}",
            thousands(again),
            if again == 1 { "" } else { "s" }
        ));
    }
    if !extra.is_empty() {
        let _ = write!(dir, "  ({})", extra.join(", "));
    }
    let mut file = basename(&v.path).to_string();
    if v.stub {
        file.push_str(" (stub)");
    }
    // A renamed copy: what told its family, when its file name does not.
    match (v.family_by.as_deref(), v.soname.as_deref()) {
        (Some("symbol"), _) => file.push_str(" (by its exports)"),
        (Some("soname"), Some(so)) if so != basename(&v.path) => {
            let _ = write!(file, " (SONAME {so})");
        }
        _ => {}
    }
    [
        v.family.clone().unwrap_or_else(|| "other".into()),
        file,
        v.version
            .as_ref()
            .map(NameVersion::text)
            .unwrap_or_else(|| "-".into()),
        why_text(sh, v),
        requester_text(sh, &v.via, v.requester.as_deref()),
        dir,
    ]
    .map(|cell| esc(&cell).into_owned())
}

/// `loaded ×1,000,000, unloaded ×1,000,000`: how often the row's
/// identical loads happened (a program that loads and unloads a library
/// in a loop), and how often it left.
fn loaded_times(v: &LibraryView) -> String {
    let mut s = format!("loaded ×{}", thousands(v.count));
    if v.unloads > 0 {
        let _ = write!(s, ", unloaded ×{}", thousands(v.unloads));
    }
    s
}

/// `1234567` → `1,234,567`.
pub(super) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The library table's header row.
const HEADER: [&str; 6] = [
    "FAMILY",
    "LIBRARY",
    "VERSION",
    "FOUND VIA",
    "ASKED BY",
    "DIRECTORY",
];

/// The library rows under a header row, columns aligned, the family named
/// once per group. When a row would not fit the width, each library takes
/// two lines: family, file and version, then (indented, wrapped) why,
/// who asked and where.
fn write_rows(rows: &[[String; 6]], body: &str, opts: &TextOptions, out: &mut String) {
    if rows.is_empty() {
        return;
    }
    let header = HEADER.map(str::to_string);
    let all = || std::iter::once(&header).chain(rows);
    let widths: Vec<usize> = (0..5)
        .map(|c| all().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let wide = |r: &[String; 6], fam: &str| {
        let mut l = format!("{body}{}", padr(fam, widths[0]));
        for c in 1..5 {
            let _ = write!(l, "  {}", padr(&r[c], widths[c]));
        }
        let _ = write!(l, "  {}", r[5]);
        l.trim_end().to_string()
    };
    let fits = opts
        .width
        .is_none_or(|w| all().all(|r| wide(r, &r[0]).chars().count() <= w));
    // Two lines per library: the version on the first where it fits.
    let version_first = |r: &[String; 6]| {
        opts.width
            .is_none_or(|w| body.len() + widths[0] + widths[1] + r[2].chars().count() + 4 <= w)
    };
    let mut last_family = String::new();
    for (k, r) in all().enumerate() {
        let fam = if r[0] == last_family { "" } else { &r[0] };
        let lines: Vec<String> = if fits {
            vec![wide(r, fam)]
        } else {
            let mut first = format!("{body}{}  {}", padr(fam, widths[0]), padr(&r[1], widths[1]));
            let mut rest = vec![&r[3], &r[4], &r[5]];
            if version_first(r) {
                first = format!("{first}  {}", r[2]);
            } else {
                rest.insert(0, &r[2]);
            }
            let indent = format!("{body}{}    ", " ".repeat(widths[0]));
            let rest: Vec<&str> = rest.iter().map(|c| c.as_str()).collect();
            let mut v = vec![first.trim_end().to_string()];
            v.extend(wrap(
                &rest.join(" · "),
                &indent,
                &format!("{indent}  "),
                opts.width.unwrap_or(80),
            ));
            v
        };
        for l in lines {
            if k == 0 {
                out.push_str(&paint(opts, Role::Header, &l));
                out.push('\n');
            } else {
                line(out, &l);
            }
        }
        if k > 0 {
            last_family = r[0].clone();
        }
    }
}

/// The one line of a start-up failure: which library the loader could not
/// find, who needed it, and the copies on this machine (one that fits, else
/// one of another major, which does not).
fn render_startup(sh: &Shortener, img: &Image, st: &StartupFailure, body: &str, out: &mut String) {
    line(
        out,
        &format!("{body}start-up: {}", startup_text(sh, img, st)),
    );
}

/// [`render_startup`]'s text, for the Markdown block: `prefix` is its
/// `…/` legend.
pub(super) fn startup_line(img: &Image, st: &StartupFailure, prefix: Option<&str>) -> String {
    startup_text(&Shortener::new(img, prefix), img, st)
}

fn startup_text(sh: &Shortener, img: &Image, st: &StartupFailure) -> String {
    let failed = img.failed.iter().find(|f| f.ev.seq == st.seq);
    let who = match failed.map(|f| f.ev.via.as_str()) {
        Some(via::PRELOAD) => "LD_PRELOAD".to_string(),
        _ => requester_name(sh, st.requester.as_deref()).unwrap_or_else(|| "the program".into()),
    };
    let copy = |c: &Copy| {
        format!(
            "{} ({})",
            sh.abbr(&c.path),
            c.version.as_deref().unwrap_or("version unknown")
        )
    };
    let more = |n: usize| {
        if n > 1 {
            format!(" (+{} more)", n - 1)
        } else {
            String::new()
        }
    };
    let copies = if !st.looked {
        "copies not looked for: the trace is from another host".to_string()
    } else if let Some(c) = st.fitting.first() {
        let searched = failed.is_some_and(|f| {
            f.ev.tried
                .iter()
                .any(|t| dirname(&t.path) == dirname(&c.path))
        });
        let where_ = if searched {
            "in a directory the loader searched (a broken link?)"
        } else {
            "in a directory the loader did not search"
        };
        format!(
            "a copy that fits: {}, {where_}{}",
            copy(c),
            more(st.fitting.len())
        )
    } else if let Some(c) = st.other_major.first() {
        format!(
            "only another major on this machine: {}, which does not fit{}",
            copy(c),
            more(st.other_major.len())
        )
    } else {
        "no copy on this machine".to_string()
    };
    format!(
        "the loader could not find {} (needed by {who}) and ended the program before main (exit status 127); {copies}",
        st.name
    )
}

/// The objects that carry a static CUDA runtime, other than NVIDIA's own
/// libraries (every one of those does: no news, and not what the program
/// links), with the runtime's version when it is known.
fn render_static_runtimes(sh: &Shortener, files: &ImageFiles, body: &str, out: &mut String) {
    for r in files.static_runtimes.iter().filter(|r| !r.nvidia) {
        line(
            out,
            &format!(
                "{body}static  {} carries a static CUDA runtime ({})",
                sh.abbr(&r.path),
                static_runtime_version(r)
            ),
        );
    }
}

/// `CUDA 13.2, from …`, or that it is unknown.
pub(super) fn static_runtime_version(r: &StaticRuntime) -> String {
    match (&r.version, &r.version_from) {
        (Some(v), Some(from)) => format!("CUDA {v}, from {from}"),
        (Some(v), None) => format!("CUDA {v}"),
        _ => "version unknown".to_string(),
    }
}

/// The libraries whose version could not be asked at report time, and why
/// (the file changed since the trace, is gone, or asking failed): one line
/// per reason, so that a trace whose files are all gone says so once.
fn render_not_asked(sh: &Shortener, files: &ImageFiles, body: &str, out: &mut String) {
    let mut by_why: Vec<(&str, Vec<String>)> = Vec::new();
    for n in &files.not_asked {
        match by_why.iter_mut().find(|(w, _)| *w == n.why) {
            Some((_, names)) => names.push(sh.short(&n.path)),
            None => by_why.push((&n.why, vec![sh.short(&n.path)])),
        }
    }
    for (why, names) in by_why {
        line(out, &format!("{body}version {}: {why}", names.join(", ")));
    }
}

fn render_failed(sh: &Shortener, f: &Failed, times: u64, body: &str, out: &mut String) {
    let ev = &f.ev;
    let fam = ev
        .family
        .as_deref()
        .map(|f| format!(" [{f}]"))
        .unwrap_or_default();
    let ns = if ev.lmid != 0 {
        format!(" [namespace {}]", ev.lmid)
    } else {
        String::new()
    };
    let again = if times > 1 {
        format!("  ({} times)", thousands(times))
    } else {
        String::new()
    };
    let dep = if ev.dependency_failed {
        "  (a dependency could not be loaded)"
    } else {
        ""
    };
    line(
        out,
        &format!(
            "{body}FAILED  {}{fam}  {}{ns}{again}{dep}",
            ev.name,
            requester_text(sh, &ev.via, ev.requester.as_deref())
        ),
    );
    let errors = f.errors();
    if errors.is_empty() && ev.fatal {
        let _ = writeln!(
            out,
            "{body}        error: ld.so gave up at start-up (\"error while loading shared libraries\" on stderr, exit status 127)"
        );
    } else if errors.is_empty() {
        let _ = writeln!(
            out,
            "{body}        error: not read by the program (it did not call dlerror)"
        );
    }
    for e in errors {
        line(out, &format!("{body}        error: {e}"));
    }
    let rows = compact_tried(&ev.tried);
    if rows.is_empty() {
        return;
    }
    let all_missing = rows
        .iter()
        .all(|r| r.result == cudnn_trace_format::tried::MISSING);
    let _ = writeln!(
        out,
        "{body}        tried{}:",
        if all_missing { ", all missing" } else { "" }
    );
    // One line per search step, in the loader's order.
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    let want = basename(&ev.name);
    for r in &rows {
        let mut item = if basename(&r.path) == want {
            sh.abbr(dirname(&r.path))
        } else {
            sh.abbr(&r.path)
        };
        if r.folded > 0 {
            let _ = write!(
                item,
                " (+{} platform subdir{})",
                r.folded,
                if r.folded == 1 { "" } else { "s" }
            );
        }
        if !all_missing {
            let _ = write!(item, " [{}]", r.result);
        }
        match groups.last_mut() {
            Some((reason, items)) if *reason == r.reason => items.push(item),
            _ => groups.push((&r.reason, vec![item])),
        }
    }
    let w = groups
        .iter()
        .map(|g| g.0.chars().count())
        .max()
        .unwrap_or(0);
    for (reason, items) in groups {
        line(
            out,
            &format!("{body}          {}  {}", padr(reason, w), items.join(", ")),
        );
    }
}

/// Writes the pin lines of an image: the setting, what was blocked (name
/// variants of one library on one line), and any cuDNN file from elsewhere.
fn render_pin(sh: &Shortener, img: &Image, body: &str, out: &mut String) {
    let Some(pv) = pin_view(img) else { return };
    let mut counts = vec![format!("{} rerouted", pv.rerouted)];
    if !pv.blocked.is_empty() {
        counts.push(format!("{} blocked", pv.blocked.len()));
    }
    if !pv.unpinned.is_empty() {
        counts.push(format!("{} left to the normal search", pv.unpinned.len()));
    }
    line(
        out,
        &format!(
            "{body}pinned  cuDNN to {} ({}): {}",
            esc(&pv.dir),
            esc(&pv.mode),
            counts.join(", ")
        ),
    );
    // One line per library (stem) and requester.
    let mut groups: Vec<(String, Option<String>, Vec<String>)> = Vec::new();
    for (label, list) in [("BLOCKED", &pv.blocked), ("unpinned", &pv.unpinned)] {
        groups.clear();
        for r in list.iter() {
            let stem = so_stem(&r.name).unwrap_or(&r.name).to_string();
            match groups
                .iter_mut()
                .find(|g| g.0 == stem && g.1 == r.requester)
            {
                Some(g) => g.2.push(basename(&r.name).to_string()),
                None => groups.push((
                    stem,
                    r.requester.clone(),
                    vec![basename(&r.name).to_string()],
                )),
            }
        }
        for (stem, requester, names) in &groups {
            let shown = short_variants(names, stem, 1);
            let what = if label == "BLOCKED" {
                "not in the pin directory, so the load failed"
            } else {
                "not in the pin directory; the normal search ran (warn mode)"
            };
            line(
                out,
                &esc(&format!(
                    "{body}{label:<8}  {}  {}: {what}",
                    shown.join(", "),
                    match requester_name(sh, requester.as_deref()) {
                        Some(who) => format!("asked by {who}"),
                        None => "asked".to_string(),
                    }
                )),
            );
        }
    }
    for p in &pv.outside {
        line(
            out,
            &esc(&format!(
                "{body}{}  {p} entered from outside the pin directory",
                if pv.mode == cudnn_trace_format::pin::STRICT {
                    "NOT PINNED"
                } else {
                    "unpinned"
                },
            )),
        );
    }
}

/// Name variants of one library, each from the `from`-th on written without
/// their common `stem` (`libx.so.9.1.0, .9.1` with `from` 1).
fn short_variants<'n>(names: &'n [String], stem: &str, from: usize) -> Vec<&'n str> {
    names
        .iter()
        .enumerate()
        .map(|(k, n)| match n.strip_prefix(stem) {
            Some(rest) if k >= from && !rest.is_empty() => rest,
            _ => n.as_str(),
        })
        .collect()
}

fn padr(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n >= w {
        s.to_string()
    } else {
        format!("{s}{}", " ".repeat(w - n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::failures::grouped_failures;
    use crate::model::trace::parse_trace;
    use crate::testutil::{header, image, load};
    use std::path::Path;

    #[test]
    fn tree_exec_chain_and_children() {
        let mut set = TraceSet::default();
        let cudnn = load(
            101,
            1,
            "/v/nvidia/cudnn/lib/libcudnn.so.9",
            "/v/nvidia/cudnn/lib/libcudnn.so.9.14.0",
            "RUNPATH",
            "/v/torch/lib/libtorch_cuda.so",
            "/v/torch/lib/libtorch_cuda.so",
            "needed",
            true,
        );
        set.images.push(image(100, 50, "exec", &[], "100.jsonl"));
        set.images.push(image(
            100,
            50,
            "exec",
            std::slice::from_ref(&cudnn),
            "100.1.jsonl",
        ));
        set.images
            .push(image(101, 100, "fork", &[cudnn], "101.jsonl"));
        for k in 0..7 {
            set.images.push(image(
                200 + k,
                100,
                "exec",
                &[],
                &format!("{}.jsonl", 200 + k),
            ));
        }
        set.images.sort_by_key(|i| (i.header.pid, i.index));
        set.launchers.push((
            "launcher.json".into(),
            LauncherRecord {
                pid: Some(100),
                exit_code: Some(3),
                argv: vec!["sh".into(), "run.sh".into()],
                ..Default::default()
            },
        ));
        let a = ProcessTree::new(&set);
        assert_eq!(a.roots, vec![0]);
        assert_eq!(a.link[1], Link::Exec(0));
        // The fork child started (t_ns 101000) after image 100.1 (t_ns 100000).
        assert_eq!(a.link[2], Link::Child(1));
        assert_eq!(a.ending[1].as_deref(), Some("exit status 3"));
        assert_eq!(a.ending[0], None);
        let text = render(
            &set,
            &a,
            &TextOptions {
                location: vec!["out/x".into()],
                ..Default::default()
            },
        );
        assert!(
            text.contains("pid 100 (ppid 50)  python → exec python train.py"),
            "{text}"
        );
        assert!(text.contains("→ exit status 3"), "{text}");
        assert!(text.contains("9.14.0"), "{text}");
        assert!(text.contains("RUNPATH of libtorch_cuda.so"), "{text}");
        assert!(text.contains("needed by libtorch_cuda.so"), "{text}");
        assert!(text.contains("/v/nvidia/cudnn/lib"), "{text}");
        assert!(
            text.contains("7 other process images loaded no CUDA library: python ×7"),
            "{text}"
        );
        assert!(text.contains("trace: out/x"), "{text}");
    }

    #[test]
    fn versioned_name_misses_fold_into_the_library_found() {
        // cuDNN 9's search order: .9.1.0 and .9.1 miss, .9 is found (by the
        // same requester); a miss by another requester stays a failure.
        let fail = |seq: u64, name: &str, req: &str| {
            format!(
                r#"{{"ev":"load_failed","seq":{seq},"t_ns":1,"pid":1,"ppid":0,"tid":1,"name":"{name}","requester":"{req}","via":"dlopen","mode":2,"lmid":0,"family":"cudnn","tried":[],"error":null,"errno":null}}"#
            )
        };
        let found = r#"{"ev":"load","seq":3,"t_ns":1,"pid":1,"ppid":0,"tid":1,"name":"libcudnn_graph.so.9","path":"/l/libcudnn_graph.so.9","realpath":null,"reason":"RUNPATH","reason_owner":"/l/libcudnn.so.9","search_dir":"/l","requester":"/l/libcudnn.so.9","via":"dlopen","mode":2,"lmid":0,"soname":null,"dev":null,"ino":null,"size":null,"build_id":null,"family":"cudnn","tried":[],"new":true}"#;
        let lines = vec![
            fail(1, "libcudnn_graph.so.9.1.0", "/l/libcudnn.so.9"),
            fail(2, "libcudnn_graph.so.9.1", "/l/libcudnn.so.9"),
            found.to_string(),
            fail(4, "libcudnn_graph.so.9.1.0", "/l/libcudnn.so.9"),
            fail(5, "libcudnn_graph.so.9.1", "/other/libx.so"),
        ];
        let img = image(1, 0, "exec", &lines, "1.jsonl");
        let left: Vec<u64> = grouped_failures(&img)
            .iter()
            .map(|(f, _)| f.ev.seq)
            .collect();
        assert_eq!(left, vec![5]);
        let text = render_one(img);
        assert!(text.contains("(after .9.1.0, .9.1 not found)"), "{text}");
        assert!(
            text.contains("FAILED  libcudnn_graph.so.9.1 [cudnn]  dlopen by libx.so"),
            "{text}"
        );
        assert_eq!(text.matches("FAILED").count(), 1, "{text}");
    }

    #[test]
    fn a_request_failed_by_its_dependency_is_shown_with_the_text() {
        // dlopen("lib/libm.so"): mapped, its DT_NEEDED libgone.so missing,
        // rolled back; the program read the loader's text for the request.
        let load = r#"{"ev":"load","seq":1,"t_ns":1,"pid":1,"ppid":0,"tid":1,"name":"lib/libm.so","path":"lib/libm.so","realpath":null,"reason":"path","reason_owner":null,"search_dir":null,"requester":"/b/main","via":"dlopen","mode":2,"lmid":0,"soname":null,"dev":null,"ino":null,"size":null,"build_id":null,"family":"cudnn","tried":[],"new":true}"#;
        let dep = r#"{"ev":"load_failed","seq":2,"t_ns":1,"pid":1,"ppid":0,"tid":1,"name":"libgone.so","requester":"lib/libm.so","via":"needed","mode":null,"lmid":0,"family":null,"tried":[],"error":null,"errno":null}"#;
        let req = r#"{"ev":"load_failed","seq":3,"t_ns":1,"pid":1,"ppid":0,"tid":1,"name":"lib/libm.so","requester":"/b/main","via":"dlopen","mode":2,"lmid":0,"family":"cudnn","tried":[],"error":null,"errno":0,"dependency_failed":true}"#;
        let text = r#"{"ev":"dlerror","seq":4,"t_ns":1,"pid":1,"ppid":0,"tid":1,"req":3,"error":"libgone.so: cannot open shared object file: No such file or directory"}"#;
        let lines: Vec<String> = [load, dep, req, text]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let img = image(1, 0, "exec", &lines, "1.jsonl");
        // Same name mapped then rolled back is not "another variant found".
        assert_eq!(grouped_failures(&img).len(), 2);
        assert_eq!(
            img.failed[0].errors(),
            vec!["libgone.so: cannot open shared object file: No such file or directory"]
        );
        let out = render_one(img);
        assert!(
            out.contains(
                "FAILED  lib/libm.so [cudnn]  dlopen by main  (a dependency could not be loaded)"
            ),
            "{out}"
        );
        assert!(!out.contains("not read by the program"), "{out}");
    }

    #[test]
    fn a_loss_note_is_not_said_again_beside_the_runs_loss_line() {
        // The shim's note on the first write the disk took again: the
        // header counts the same loss, which the "trace incomplete" line
        // says for the whole run.
        let note = r#"{"ev":"note","seq":2,"t_ns":1,"pid":1,"ppid":0,"tid":1,"level":"error","msg":"3 events could not be written to d/1.jsonl (No space left on device) and are lost (3 in all in this file)","lost":3,"errno":28}"#;
        let other = r#"{"ev":"note","seq":3,"t_ns":1,"pid":1,"ppid":0,"tid":1,"level":"warning","msg":"something else"}"#;
        let lines = vec![note.to_string(), other.to_string()];
        let mut img = image(1, 0, "exec", &lines, "1.jsonl");
        img.header.lost = 3;
        img.header.lost_errno = 28;
        let out = render_one(img.clone());
        assert!(out.contains("trace incomplete:"), "{out}");
        assert!(!out.contains("could not be written to"), "{out}");
        assert!(out.contains("note    warning: something else"), "{out}");
        // A header that could not count it: the note is all there is.
        img.header.lost = 0;
        img.header.lost_errno = 0;
        let out = render_one(img);
        assert!(
            out.contains("note    error: 3 events could not be written"),
            "{out}"
        );
    }

    /// The default text summary of a trace set holding just `img`.
    fn render_one(img: Image) -> String {
        let mut set = TraceSet::default();
        set.images.push(img);
        render(&set, &ProcessTree::new(&set), &TextOptions::default())
    }

    #[test]
    fn identical_failures_are_grouped() {
        let f = |seq: u64, name: &str| {
            format!(
                r#"{{"ev":"load_failed","seq":{seq},"t_ns":1,"pid":1,"ppid":0,"tid":1,"name":"{name}","requester":"/l/libcudnn.so.9","via":"dlopen","mode":2,"lmid":0,"family":"cudnn","tried":[{{"path":"/a/{name}","reason":"LD_LIBRARY_PATH","result":"missing"}},{{"path":"/b/{name}","reason":"LD_LIBRARY_PATH","result":"missing"}},{{"path":"/l/{name}","reason":"RUNPATH","result":"rejected"}}],"error":null,"errno":null}}"#
            )
        };
        let lines = vec![
            f(1, "libcudnn_graph.so.9.1"),
            f(2, "libcudnn_graph.so.9.1"),
            f(3, "libcudnn_adv.so.9"),
        ];
        let img = image(1, 0, "exec", &lines, "1.jsonl");
        let groups = grouped_failures(&img);
        assert_eq!(groups.iter().map(|g| g.1).collect::<Vec<_>>(), vec![2, 1]);
        let text = render_one(img);
        assert!(
            text.contains(
                "FAILED  libcudnn_graph.so.9.1 [cudnn]  dlopen by libcudnn.so.9  (2 times)"
            ),
            "{text}"
        );
        assert!(
            text.contains("LD_LIBRARY_PATH  /a [missing], /b [missing]"),
            "{text}"
        );
        assert!(text.contains("RUNPATH          /l [rejected]"), "{text}");
        assert!(
            text.contains("error: not read by the program (it did not call dlerror)"),
            "{text}"
        );
    }

    #[test]
    fn reused_pids_forming_a_cycle_do_not_hang() {
        let mut set = TraceSet::default();
        set.images.push(image(5, 6, "exec", &[], "5.jsonl"));
        set.images.push(image(6, 5, "exec", &[], "6.jsonl"));
        set.images.push(image(7, 5, "exec", &[], "7.jsonl"));
        let a = ProcessTree::new(&set);
        assert_eq!(a.roots.len(), 1);
        let text = render(&set, &a, &TextOptions::default());
        assert_eq!(text.matches("python train.py").count(), 3, "{text}");
    }

    #[test]
    fn common_prefix_is_chosen_and_written_once() {
        let sp = "/opt/venv/lib/python3.12/site-packages";
        let lines: Vec<String> = [
            "cudnn/lib/libcudnn.so.9",
            "cudnn/lib/libcudnn_graph.so.9",
            "cu13/lib/libcublas.so.13",
            "cu13/lib/libcudart.so.13",
        ]
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let full = format!("{sp}/nvidia/{p}");
            load(
                1,
                k as u64 + 1,
                &full,
                &full,
                "RUNPATH",
                &format!("{sp}/torch/lib/libtorch.so"),
                &format!("{sp}/torch/lib/libtorch.so"),
                "needed",
                true,
            )
        })
        .collect();
        let mut set = TraceSet::default();
        set.images.push(image(1, 0, "exec", &lines, "1.jsonl"));
        assert_eq!(
            common_prefix(&set, false).as_deref(),
            Some("/opt/venv/lib/python3.12/site-packages/")
        );
        let a = ProcessTree::new(&set);
        let text = render(&set, &a, &TextOptions::default());
        assert!(
            text.contains("paths: …/ stands for /opt/venv/lib/python3.12/site-packages/"),
            "{text}"
        );
        assert!(text.contains("…/nvidia/cudnn/lib"), "{text}");
        assert_eq!(text.matches(sp).count(), 1, "{text}");
    }

    #[test]
    fn shortening_only_when_unambiguous() {
        let a = load(
            1,
            1,
            "/a/libcudnn.so.9",
            "/a/libcudnn.so.9",
            "RUNPATH",
            "/a/libtorch.so",
            "/a/libtorch.so",
            "needed",
            true,
        );
        let b = load(
            1,
            2,
            "/b/libcudnn.so.9",
            "/b/libcudnn.so.9",
            "RUNPATH",
            "/b/libtorch.so",
            "/b/libtorch.so",
            "needed",
            true,
        );
        let img = image(1, 0, "exec", &[a, b], "1.jsonl");
        let sh = Shortener::new(&img, None);
        assert_eq!(sh.short("/a/libtorch.so"), "/a/libtorch.so");
        assert_eq!(sh.short("/usr/bin/python3.11"), "python3.11");
    }

    #[test]
    fn deep_process_chains_render_flat_and_fast() {
        // 3000 processes, each the child of the previous one; the last
        // loaded cuDNN, so every one of them is shown.
        const N: u32 = 3000;
        let cudnn = load(
            N,
            1,
            "/l/libcudnn.so.9",
            "/l/libcudnn.so.9",
            "LD_LIBRARY_PATH",
            "",
            "/x/libtorch.so",
            "dlopen",
            true,
        );
        let mut set = TraceSet::default();
        for pid in 1..=N {
            let lines = if pid == N {
                vec![cudnn.clone()]
            } else {
                Vec::new()
            };
            set.images
                .push(image(pid, pid - 1, "exec", &lines, &format!("{pid}.jsonl")));
        }
        // And one pid that exec'd 3000 times without loading anything
        // before its last image.
        let mut chain: Vec<Image> = (0..N)
            .map(|k| image(9000, 8999, "exec", &[], &format!("9000.{k}.jsonl")))
            .collect();
        chain.last_mut().unwrap().events_mut().loads = set.images[N as usize - 1].loads.clone();
        set.images.extend(chain);
        let start = std::time::Instant::now();
        // A thread with a small stack: rendering must not recurse per level.
        let text = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || {
                let a = ProcessTree::new(&set);
                render(&set, &a, &TextOptions::default())
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
        let longest = text.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(longest < 600, "longest line: {longest} characters");
        assert!(
            text.contains(&format!(
                "… {} more levels below, shown without further indentation",
                N as usize - 1 - MAX_DEPTH
            )),
            "{}",
            &text[..2000]
        );
        assert_eq!(text.matches("\n└ pid").count(), 0);
        assert_eq!(text.matches("└ pid").count(), N as usize - 1);
        // The exec chain is one line: its first and last images.
        assert!(text.contains("python → python → python → … 2993 more → python → python → python → exec python train.py"), "{}", &text[..2000]);
    }

    /// A pinned process: the reroutes show on the library rows, the blocked
    /// name variants of one library on one line (not as four failures), and
    /// a cuDNN file from outside the directory is called out.
    #[test]
    fn pinned_process_rows_blocked_line_and_outside_file() {
        let pin = |seq: u64, name: &str, action: &str, to: &str| {
            format!(
                r#"{{"ev":"pin","seq":{seq},"t_ns":1,"pid":1,"ppid":0,"tid":1,"name":"{name}","requester":"/pin/libcudnn_graph.so.9","action":"{action}","rule":"x","to":{to},"dir":"/pin","mode":"strict"}}"#
            )
        };
        let blocked = |seq: u64, name: &str| {
            format!(
                r#"{{"ev":"load_failed","seq":{seq},"t_ns":1,"pid":1,"ppid":0,"tid":1,"name":"{name}","requester":"/pin/libcudnn_graph.so.9","via":"dlopen","mode":1,"lmid":0,"family":"cudnn","tried":[{{"path":"/pin/{name}","reason":"pin","result":"missing"}}],"error":null,"errno":null}}"#
            )
        };
        let load = |seq: u64, name: &str, path: &str, reason: &str| {
            format!(
                r#"{{"ev":"load","seq":{seq},"t_ns":1,"pid":1,"ppid":0,"tid":1,"name":"{name}","path":"{path}","realpath":"{path}","reason":"{reason}","reason_owner":null,"search_dir":"/pin","requester":"/pin/libcudnn.so.9","via":"dlopen","mode":1,"lmid":0,"soname":null,"dev":1,"ino":2,"size":3,"build_id":null,"family":"cudnn","tried":[],"new":true}}"#
            )
        };
        let lines = vec![
            pin(
                1,
                "libcudnn_graph.so.9.19.0",
                "rerouted",
                r#""/pin/libcudnn_graph.so.9""#,
            ),
            load(
                2,
                "libcudnn_graph.so.9.19.0",
                "/pin/libcudnn_graph.so.9",
                "pin",
            ),
            pin(
                3,
                "libcudnn_heuristic.so.9.19.0",
                "blocked",
                r#""/pin/libcudnn_heuristic.so.9.19.0""#,
            ),
            blocked(4, "libcudnn_heuristic.so.9.19.0"),
            pin(
                5,
                "libcudnn_heuristic.so.9",
                "blocked",
                r#""/pin/libcudnn_heuristic.so.9""#,
            ),
            blocked(6, "libcudnn_heuristic.so.9"),
            load(7, "/x/libcudnn_ops.so.9", "/x/libcudnn_ops.so.9", "path"),
        ];
        let mut s = header(1, 0, "exec").replace(
            r#""preload":true}"#,
            r#""preload":true,"pin":{"dir":"/pin","mode":"strict"}}"#,
        );
        s.push('\n');
        for l in &lines {
            s.push_str(l);
            s.push('\n');
        }
        let (img, probs) = parse_trace(s.as_bytes(), Path::new("1.jsonl"));
        assert!(probs.is_empty(), "{probs:?}");
        let img = img.unwrap();
        let pv = pin_view(&img).unwrap();
        assert_eq!((pv.rerouted, pv.blocked.len()), (1, 2));
        assert_eq!(pv.outside, vec!["/x/libcudnn_ops.so.9".to_string()]);
        let text = render_one(img);
        assert!(
            text.contains("pinned, asked for libcudnn_graph.so.9.19.0"),
            "{text}"
        );
        assert!(
            text.contains("pinned  cuDNN to /pin (strict): 1 rerouted, 2 blocked"),
            "{text}"
        );
        assert!(
            text.contains(
                "BLOCKED   libcudnn_heuristic.so.9.19.0, .9  asked by libcudnn_graph.so.9: not in the pin directory, so the load failed"
            ),
            "{text}"
        );
        assert!(!text.contains("FAILED"), "{text}");
        assert!(
            text.contains(
                "NOT PINNED  /x/libcudnn_ops.so.9 entered from outside the pin directory"
            ),
            "{text}"
        );
    }

    fn fleet_text(each: bool) -> String {
        let set = crate::model::read_paths(&[crate::testutil::alike_fleet()]);
        let opts = TextOptions {
            each,
            ..Default::default()
        };
        render(&set, &ProcessTree::new(&set), &opts)
    }

    #[test]
    fn alike_processes_share_one_block() {
        let text = fleet_text(false);
        let heads: Vec<&str> = text
            .lines()
            .filter(|l| l.trim_start().starts_with(['p', '└', '2', '3']))
            .collect();
        assert_eq!(
            heads,
            [
                "pid 10 (ppid 1)  python train.py  [/usr/bin/python3.11]",
                "   └ 3 processes alike: pids 11–13 (fork)  python train.py  [/usr/bin/python3.11]",
                "   └ pid 14 (fork)  python train.py  [/usr/bin/python3.11]",
                "2 processes alike: pids 20–21 (ppid 5)  python train.py  [/usr/bin/python3.11]",
            ],
            "{text}"
        );
        assert!(text.contains("(loaded ×2)"), "{text}");
        assert!(text.contains("(loaded ×3)"), "{text}");
        assert!(
            text.contains("`cudnn-trace report --each` shows each one"),
            "{text}"
        );
        assert!(
            text.starts_with("cudnn-trace: 7 processes traced"),
            "{text}"
        );

        // --each: every process on its own, each block as the shared one.
        let each = fleet_text(true);
        assert!(!each.contains("alike"), "{each}");
        for pid in [11, 12, 13, 20, 21] {
            assert!(each.contains(&format!("pid {pid} (")), "{each}");
        }
        let block = |t: &str, head: &str| -> String {
            let at = t.find(head).unwrap();
            let body = &t[at..];
            let body = &body[body.find('\n').unwrap()..];
            body[..body.find("\n\n").unwrap_or(body.len())].to_string()
        };
        assert_eq!(block(&text, "3 processes alike"), block(&each, "pid 12 ("));
    }

    #[test]
    fn pids_as_ranges() {
        assert_eq!(pid_ranges(&mut [9, 1, 2, 3, 5, 10, 3]), "1–3, 5, 9–10");
        let mut many: Vec<u32> = (0..20).map(|k| k * 10).collect();
        assert_eq!(pid_ranges(&mut many), "0, 10, 20, 30, 40, 50, … (14 more)");
    }
}
