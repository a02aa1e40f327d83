//! What the machine says about the files a process image loaded, where the
//! trace itself could not say it without a side effect in the program
//! (issue 14): the versions of libraries nobody asked inside the process.
//!
//! A library's version comes, best first, from
//!
//! 1. what the library said in the process (a `version` event of source
//!    `query`, asked by the program or by the shim): not asked again;
//! 2. asking the file at report time in a probe process
//!    (`machine::versions`): a cuDNN core library's getters, a cuDNN
//!    sub-library's `*VersionCheck` against its own install's core library
//!    (0: it is that version), a runtime's `cudaRuntimeGetVersion`, the
//!    driver's `cuDriverGetVersion`, provided the file on disk is still the
//!    one traced (else the report says it changed, or is gone);
//! 3. its file name (`libcudnn_graph.so.9.14.0`);
//! 4. for a cuDNN library whose name has the major only: the names it asked
//!    for itself (cuDNN 9 asks for its sub-libraries with its own full
//!    version first, `libcudnn_graph.so.9.19.0`, so the dispatcher, which
//!    answers no version query of its own, tells it that way), else the pip
//!    distribution whose `RECORD` lists the file with the size traced, else
//!    (a dispatcher) the core library of its install that it loaded itself
//!    from its own directory (cuDNN 8's `libcudnn_ops_infer.so.8`).
//!
//! The first is the model's; this module finds the others, once for the
//! whole trace set (one batch of probe processes), so that the summary, the
//! JSON document and the rules see the same versions.

use crate::machine::probe::{self, Answer};
use crate::machine::{Asked, Copy, Fit, Machine, Role, TraceId, Wanted};
use crate::model::{basename, dirname, name_version, stem, Image, TraceSet, Ver};
use cudnn_trace_format::read::{DriverClient, Load};
use cudnn_trace_format::version_source;
use serde::Serialize;
use std::collections::BTreeMap;

/// What the machine says about one image's files.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImageFiles {
    /// Versions found outside the trace's own `version` events, by the
    /// path of the library's `load` event.
    pub versions: BTreeMap<String, Found>,
    /// Libraries that could have been asked but were not, and why.
    pub not_asked: Vec<NotAsked>,
    /// The library the loader could not find at start-up, if that is how
    /// the process ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup: Option<StartupFailure>,
    /// Objects that carry a CUDA runtime linked into them.
    pub static_runtimes: Vec<StaticRuntime>,
}

/// An object that carries a CUDA runtime linked into it (nvcc's default;
/// CuPy's `cupy_backends/cuda/api/runtime….so`): no `libcudart` file enters
/// the process for it, but it asks the driver for its entry points (a
/// `driver_client` event with `static_runtime`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StaticRuntime {
    /// The object (the executable's path for the program itself).
    pub path: String,
    /// An NVIDIA library (cuDNN, cuBLAS, …): they all carry a static
    /// runtime of their own CUDA build. A fact, not a problem, and not what
    /// the program links.
    pub nvidia: bool,
    /// The runtime's version when it can be found without a side effect:
    /// `13.2`, or a major (`13.x`); None: unknown.
    /// In JSON, numbers and this text (`model::version::VersionDoc`).
    #[serde(serialize_with = "crate::model::version::serialize_version_text")]
    pub version: Option<String>,
    /// Where [`StaticRuntime::version`] comes from, in words.
    pub version_from: Option<String>,
}

/// A library the loader could not find at start-up (a DT_NEEDED or
/// `LD_PRELOAD` name before `main`: ld.so then ends the process with status
/// 127), and the copies of it on this machine.
#[derive(Debug, Clone, Serialize)]
pub struct StartupFailure {
    pub name: String,
    /// The object whose DT_NEEDED entry it is (empty: the program).
    pub requester: Option<String>,
    /// `seq` of its `load_failed` event.
    pub seq: u64,
    /// Whether copies were looked for (only on the host the trace was
    /// taken on).
    pub looked: bool,
    /// Copies that would do: the name asked for, or the same major.
    pub fitting: Vec<Copy>,
    /// Copies of another major, which the requester cannot use.
    pub other_major: Vec<Copy>,
}

/// A version found for a library.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Found {
    /// `9.19.0`, `13.0` (a runtime, or the CUDA version a driver supports);
    /// None when the answer gave none (a check that did not match). In
    /// JSON, numbers and this text (`model::version::VersionDoc`).
    #[serde(serialize_with = "crate::model::version::serialize_version_text")]
    pub version: Option<String>,
    /// cuDNN core library: `cudnnGetCudartVersion()` (13000).
    pub cuda_build: Option<i64>,
    /// cuDNN core library: `cudnnGetMaxDeviceVersion()` (1210).
    pub max_device: Option<i64>,
    /// What a sub-library's `*VersionCheck` returned (0: it matches the
    /// core library of its install), a runtime's or driver's status.
    pub status: Option<i64>,
    /// [`Source`].
    pub source: Source,
    /// What was asked and what it said, in words.
    pub detail: String,
}

/// Where a [`Found`] version comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// Asked in a probe process at report time.
    Asked,
    /// Asked in a probe process by an earlier report (the cache).
    AskedCached,
    /// The cuDNN file names it asked for with its own version.
    Requests,
    /// The pip distribution that installed it.
    Package,
    /// The core library of its install (cuDNN 8's `libcudnn_ops_infer`)
    /// that it loaded itself from its own directory.
    Install,
}

impl Source {
    /// How the version was found, in words (evidence details).
    pub fn words(self) -> &'static str {
        match self {
            Source::Asked | Source::AskedCached => "asked in a separate process at report time",
            Source::Requests => "from the names it asked for",
            Source::Package => "from its pip package",
            Source::Install => "from the core library it loaded from its own directory",
        }
    }
}

/// A library that was not asked its version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotAsked {
    /// The path of its `load` event.
    pub path: String,
    /// `changed since the trace (size 1000 → 1200)`, `gone`, or why asking
    /// failed.
    pub why: String,
}

/// The files of every image of a set (in `TraceSet::images` order). The
/// files of traces taken on another host are not looked at.
pub fn of_set(set: &TraceSet, machine: &Machine) -> Vec<ImageFiles> {
    let local: Vec<bool> = set
        .images
        .iter()
        .map(|img| machine.is_local(img.header.hostname.as_deref()))
        .collect();
    // An image alike an earlier one (`Image::class`: the same files, the
    // same host) gets that one's answers.
    let first = crate::analysis::first_of_class(set);
    // Every question of the set at once: one batch of probe processes.
    let mut wanted: Vec<(usize, String, Wanted)> = Vec::new();
    for (i, img) in set
        .images
        .iter()
        .enumerate()
        .filter(|(i, _)| local[*i] && first[*i] == *i)
    {
        for l in img.loads.iter().filter(|l| l.new) {
            if let Some(w) = wanted_for(img, l) {
                wanted.push((i, l.path.clone(), w));
            }
        }
    }
    let list: Vec<Wanted> = wanted.iter().map(|(_, _, w)| w.clone()).collect();
    let asked = machine.ask_versions(&list);
    let mut out: Vec<ImageFiles> = vec![ImageFiles::default(); set.images.len()];
    for ((i, path, w), a) in wanted.into_iter().zip(asked) {
        let files = &mut out[i];
        match found_from(&w, a) {
            Ok(Some(f)) => {
                files.versions.insert(path, f);
            }
            Ok(None) => {}
            Err(why) => files.not_asked.push(NotAsked { path, why }),
        }
    }
    for (i, img) in set.images.iter().enumerate() {
        if first[i] != i {
            out[i] = out[first[i]].clone();
            continue;
        }
        derived_versions(img, machine, local[i], &mut out[i]);
        out[i].startup = startup_failure(img, machine, local[i]);
        out[i].static_runtimes = static_runtimes(img, machine, local[i], &out[i]);
    }
    out
}

/// The objects of an image that carry a static CUDA runtime, each once,
/// with the runtime's version where it can be found: the program's own
/// `cudaRuntimeGetVersion` call served by that object, a version the shim
/// recorded, for a cuDNN library its CUDA build (`cudnnGetCudartVersion`),
/// else the CUDA version the name of its pip distribution gives
/// (`cupy-cuda13x`: 13.x) when its `RECORD` lists the file with the traced
/// size.
fn static_runtimes(
    img: &Image,
    machine: &Machine,
    local: bool,
    files: &ImageFiles,
) -> Vec<StaticRuntime> {
    let mut out: Vec<StaticRuntime> = Vec::new();
    for c in img.driver_clients.iter().filter(|c| c.static_runtime) {
        if out.iter().any(|r| r.path == c.path) {
            continue;
        }
        let family = c
            .family
            .as_deref()
            .or_else(|| cudnn_trace_format::cuda_family(c.path.as_bytes()));
        let (version, version_from) = runtime_version(img, machine, local, files, c, family)
            .map_or((None, None), |(v, f)| (Some(v), Some(f)));
        out.push(StaticRuntime {
            path: c.path.clone(),
            nvidia: family.is_some(),
            version,
            version_from,
        });
    }
    out
}

fn runtime_version(
    img: &Image,
    machine: &Machine,
    local: bool,
    files: &ImageFiles,
    c: &DriverClient,
    family: Option<&str>,
) -> Option<(String, String)> {
    let mine = |p: &str| p == c.path || c.realpath.as_deref() == Some(p);
    if let Some(v) = img.calls.iter().find_map(|k| {
        (k.function == "cudaRuntimeGetVersion" && mine(&k.lib) && k.status == Some(0))
            .then_some(k.value?)
            .filter(|&v| v > 0)
    }) {
        let text = Ver::from_cuda_int(v as u64).to_string();
        return Some((text, format!("the program's cudaRuntimeGetVersion() = {v}")));
    }
    if let Some(v) = &c.runtime_version {
        let from = c
            .runtime_version_source
            .clone()
            .unwrap_or_else(|| "the trace".into());
        return Some((v.clone(), from));
    }
    if family == Some("cudnn") {
        // cuDNN links the runtime of its CUDA build ([R2][E3]).
        let dir = dirname(c.realpath.as_deref().unwrap_or(&c.path));
        let built = img
            .versions
            .iter()
            .filter(|v| dirname(&v.path) == dir)
            .find_map(|v| v.cuda_build)
            .or_else(|| {
                files
                    .versions
                    .iter()
                    .filter(|(p, _)| dirname(p) == dir)
                    .find_map(|(_, f)| f.cuda_build)
            })
            .filter(|&v| v > 0)?;
        let text = Ver::from_cuda_int(built as u64).to_string();
        return Some((
            text,
            format!("its cuDNN's cudnnGetCudartVersion() = {built}"),
        ));
    }
    if !local {
        return None;
    }
    let o = machine.package_owner(c.realpath.as_deref().unwrap_or(&c.path))?;
    if o.size.is_none() || o.size != c.size {
        return None;
    }
    Some((
        o.cuda()?,
        format!("its pip package {} {}", o.name, o.version),
    ))
}

/// Most copies whose version is asked when their name does not say it.
const ASKED_COPIES: usize = 4;

/// The copies of `name` the process could have used ([`Machine::copies`]),
/// the first few with their version asked when their file name has the
/// major only (`libcudart.so.12`: the runtime says 12.4).
pub fn copies_with_versions(machine: &Machine, img: &Image, name: &str) -> Vec<Copy> {
    let mut copies = machine.copies(img, name);
    for c in copies.iter_mut().take(ASKED_COPIES) {
        // The version text is the file name's (`Copy::version`): asked
        // when the name has none, or its major only.
        let major_only = matches!(
            name_version::of_library(&c.path, Some(&c.realpath)),
            Some(name_version::NameVersion::MajorOnly(_))
        );
        if c.version.is_some() && !major_only {
            continue;
        }
        if let Some(v) = ask_file(machine, &c.path).and_then(|f| f.version) {
            c.version = Some(v);
        }
    }
    copies
}

/// The start-up failure of an image: the search during which ld.so ended
/// the process (`fatal`), with the copies of the library on this machine.
fn startup_failure(img: &Image, machine: &Machine, local: bool) -> Option<StartupFailure> {
    let f = img.failed.iter().find(|f| f.ev.fatal)?;
    let name = f.ev.name.clone();
    let copies = if local {
        copies_with_versions(machine, img, &name)
    } else {
        Vec::new()
    };
    let (fitting, other_major) = copies
        .into_iter()
        .filter(|c| !c.is_stub())
        .partition(|c| !matches!(c.fit(&name), Fit::OtherMajor(_)));
    Some(StartupFailure {
        name,
        requester: f.ev.requester.clone(),
        seq: f.ev.seq,
        looked: local,
        fitting,
        other_major,
    })
}

/// The path a library is on disk now: its real path.
fn file_of(l: &Load) -> &str {
    l.realpath.as_deref().unwrap_or(&l.path)
}

/// The name that tells what a library is: its SONAME (a renamed copy keeps
/// it), else its file name.
fn identity_name(l: &Load) -> &str {
    l.soname
        .as_deref()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| basename(file_of(l)))
}

/// The cuDNN major of a library: from its SONAME or names.
fn cudnn_major(l: &Load) -> Option<u32> {
    [
        Some(identity_name(l)),
        Some(l.path.as_str()),
        l.realpath.as_deref(),
    ]
    .into_iter()
    .flatten()
    .find_map(|n| {
        cudnn_trace_format::cudnn_name(n.as_bytes())?
            .1
            .first()
            .copied()
    })
}

/// What asking a library of `family` called `name` (its SONAME or file
/// name; `major`: its cuDNN major) would be: None for libraries that answer
/// no version question (a cuDNN dispatcher, engines, heuristic).
fn role_for(family: &str, name: &str, major: Option<u32>) -> Option<Role> {
    Some(match family {
        "cudnn" => {
            let major = major?;
            let st = stem(name);
            if probe::core_stem(major) == Some(st) {
                Role::CudnnCore { major }
            } else {
                let (_, function) = probe::version_checks(major)
                    .iter()
                    .find(|(s, _)| *s == st)?;
                Role::CudnnCheck {
                    major,
                    function: (*function).to_string(),
                }
            }
        }
        "cudart" => Role::Runtime,
        "cuda" => Role::Driver,
        _ => return None,
    })
}

/// The version a library file on disk (not one the trace recorded: a copy
/// the rules point at) gives when asked in a probe process; None when it
/// answers no version question or could not be asked.
pub fn ask_file(machine: &Machine, path: &str) -> Option<Found> {
    let family = cudnn_trace_format::cuda_family(path.as_bytes())?;
    let soname = machine.dynamic(path).and_then(|d| d.soname);
    let name = soname.as_deref().unwrap_or_else(|| basename(path));
    let major = [name, path].iter().find_map(|n| {
        cudnn_trace_format::cudnn_name(n.as_bytes())?
            .1
            .first()
            .copied()
    });
    let real = machine.canonical(path).unwrap_or_else(|| path.to_string());
    let w = Wanted {
        path: real,
        role: role_for(family, name, major)?,
        trace: TraceId::default(),
    };
    let asked = machine.ask_versions(std::slice::from_ref(&w)).pop()?;
    found_from(&w, asked).ok().flatten()
}

/// What to ask a library, when the trace does not already say it.
fn wanted_for(img: &Image, l: &Load) -> Option<Wanted> {
    if l.stub || !file_of(l).starts_with('/') {
        return None;
    }
    let role = role_for(l.family.as_deref()?, identity_name(l), cudnn_major(l))?;
    if said_in_process(img, l, &role) {
        return None;
    }
    Some(Wanted {
        path: file_of(l).to_string(),
        role,
        trace: TraceId {
            dev: l.dev,
            ino: l.ino,
            size: l.size,
            build_id: l.build_id.clone(),
        },
    })
}

/// Whether the process already said what asking would: the library's own
/// answer (a `query` version event; for a sub-library, its check), or the
/// program's call of the version function on this copy.
fn said_in_process(img: &Image, l: &Load, role: &Role) -> bool {
    let mine = |p: &str| p == l.path || l.realpath.as_deref() == Some(p);
    let query = img
        .versions
        .iter()
        .filter(|v| mine(&v.path) && v.source == version_source::QUERY);
    let call = |f: &str| {
        img.calls.iter().any(|c| {
            c.function == f && mine(&c.lib) && c.status.unwrap_or(0) == 0 && c.value.is_some()
        })
    };
    match role {
        Role::CudnnCheck { .. } => query.clone().any(|v| v.check.is_some()),
        Role::CudnnCore { .. } => query.clone().any(|v| v.version.is_some()),
        Role::Runtime => {
            query.clone().any(|v| v.version.is_some()) || call("cudaRuntimeGetVersion")
        }
        Role::Driver => query.clone().any(|v| v.version.is_some()) || call("cuDriverGetVersion"),
    }
}

/// A version from what asking gave; Err: why nothing was asked. Ok(None):
/// probing is off.
fn found_from(w: &Wanted, a: Asked) -> Result<Option<Found>, String> {
    let (answer, cached, core) = match a {
        Asked::Answered {
            answer,
            cached,
            core,
        } => (answer, cached, core),
        Asked::Changed(why) => return Err(format!("changed since the trace ({why}): not asked")),
        Asked::Gone => return Err("no longer on disk: not asked".into()),
        Asked::Refused(why) => return Err(format!("not asked: {why}")),
        Asked::Failed(why) => return Err(format!("could not be asked: {why}")),
        Asked::Off => return Ok(None),
    };
    let source = if cached {
        Source::AskedCached
    } else {
        Source::Asked
    };
    let mut f = Found {
        version: None,
        cuda_build: None,
        max_device: None,
        status: answer.status,
        source,
        detail: String::new(),
    };
    match &w.role {
        Role::CudnnCore { .. } => core_found(&answer, &mut f),
        Role::CudnnCheck { function, major } => {
            check_found(function, *major, &answer, core, &mut f)
        }
        Role::Runtime => int_found("cudaRuntimeGetVersion", &answer, &mut f),
        Role::Driver => int_found("cuDriverGetVersion", &answer, &mut f),
    }
    Ok(Some(f))
}

fn core_found(a: &Answer, f: &mut Found) {
    let v = a.version.filter(|&v| v > 0);
    f.version = v.map(|v| Ver::from_cudnn_int(v as u64).to_string());
    f.cuda_build = a.cudart.filter(|&v| v > 0);
    f.max_device = a.max_device.filter(|&v| v > 0);
    f.detail = format!(
        "cudnnGetVersion() = {}, cudnnGetCudartVersion() = {}",
        opt(a.version),
        opt(a.cudart)
    );
}

fn check_found(
    function: &str,
    major: u32,
    a: &Answer,
    core: Option<(String, Answer)>,
    f: &mut Found,
) {
    let status = a.status.unwrap_or(-1);
    let (core_path, core_version) = match &core {
        Some((p, c)) => (
            p.as_str(),
            c.version
                .filter(|&v| v > 0)
                .map(|v| Ver::from_cudnn_int(v as u64)),
        ),
        None => ("its core library", None),
    };
    let against = match &core_version {
        Some(v) => format!("{} ({v})", basename(core_path)),
        None => basename(core_path).to_string(),
    };
    let name = probe::status_name(major, status)
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    f.detail = format!("{function}() returned {status}{name} against {against} of its directory");
    if status == 0 {
        f.version = core_version.map(|v| v.to_string());
    }
}

fn int_found(function: &str, a: &Answer, f: &mut Found) {
    f.version = a
        .version
        .filter(|&v| v > 0 && a.status == Some(0))
        .map(|v| Ver::from_cuda_int(v as u64).to_string());
    f.detail = match a.status {
        Some(0) => format!("{function}() = {}", opt(a.version)),
        Some(s) => format!("{function}() returned {s}"),
        None => format!("{function}(): no answer"),
    };
}

fn opt(v: Option<i64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_else(|| "-".into())
}

/// Versions of cuDNN libraries that answer nothing themselves (the
/// dispatcher, the engines, the heuristic) and whose names say the major
/// only: from the names they asked for, else from their pip package.
fn derived_versions(img: &Image, machine: &Machine, local: bool, files: &mut ImageFiles) {
    for l in img
        .loads
        .iter()
        .filter(|l| l.new && l.family.as_deref() == Some("cudnn"))
    {
        if l.stub || files.versions.contains_key(&l.path) || has_version(img, l) {
            continue;
        }
        let found = from_requests(img, l)
            .or_else(|| local.then(|| from_package(machine, l)).flatten())
            .or_else(|| from_install(img, &files.versions, l));
        if let Some(f) = found {
            files.versions.insert(l.path.clone(), f);
        }
    }
}

/// Whether the trace already has a version of two or more parts for `l`:
/// its file name, or a version event.
fn has_version(img: &Image, l: &Load) -> bool {
    let full = matches!(
        name_version::of_library(&l.path, l.realpath.as_deref()),
        Some(name_version::NameVersion::Full(_))
    );
    let mine = |p: &str| p == l.path || l.realpath.as_deref() == Some(p);
    full || img.versions.iter().any(|v| {
        mine(&v.path)
            && v.source == version_source::QUERY
            && v.version.as_deref().is_some_and(|s| s.contains('.'))
    })
}

/// cuDNN 9 asks for each library it loads with its own version first
/// (`libcudnn_graph.so.9.19.0`, then `.9.19`, `.9`): the full versions in
/// the names `l` asked for, when they agree, are its own.
fn from_requests(img: &Image, l: &Load) -> Option<Found> {
    let major = cudnn_major(l)?;
    let mine = |r: Option<&str>| r.is_some_and(|r| r == l.path || l.realpath.as_deref() == Some(r));
    let names = img
        .loads
        .iter()
        .filter(|x| mine(x.requester.as_deref()))
        .filter_map(|x| x.name.as_deref())
        .chain(
            img.failed
                .iter()
                .filter(|f| mine(f.ev.requester.as_deref()))
                .map(|f| f.ev.name.as_str()),
        )
        .chain(
            img.pins
                .iter()
                .filter(|p| mine(p.requester.as_deref()))
                .map(|p| p.name.as_str()),
        );
    let mut seen: Vec<(Vec<u32>, String)> = Vec::new();
    for n in names {
        let Some((_, v)) = cudnn_trace_format::cudnn_name(basename(n).as_bytes()) else {
            continue;
        };
        if v.len() == 3 && v[0] == major && !seen.iter().any(|(s, _)| *s == v) {
            seen.push((v, basename(n).to_string()));
        }
    }
    let [(v, name)] = seen.as_slice() else {
        return None;
    };
    Some(Found {
        version: Some(Ver(v.clone()).to_string()),
        cuda_build: None,
        max_device: None,
        status: None,
        source: Source::Requests,
        detail: format!("it asked for {name}"),
    })
}

/// A cuDNN dispatcher's version from the core library of its install
/// that it loaded itself, from its own directory (cuDNN 8's dispatcher asks
/// for `libcudnn_ops_infer.so.8` without a version; the dispatcher answers
/// `cudnnGetVersion` with that library's version, [R2][E3]): torch 1.13.1's
/// `torch/lib/libcudnn.so.8` is 8.7.0 by its `libcudnn_ops_infer.so.8`.
/// `known`: the versions found so far (asked at report time).
fn from_install(img: &Image, known: &BTreeMap<String, Found>, l: &Load) -> Option<Found> {
    let major = cudnn_major(l)?;
    let core = probe::core_stem(major)?;
    if stem(identity_name(l)) != "libcudnn" {
        return None;
    }
    let mine = |r: Option<&str>| r.is_some_and(|r| r == l.path || l.realpath.as_deref() == Some(r));
    let x = img.loads.iter().find(|x| {
        x.new
            && mine(x.requester.as_deref())
            && stem(identity_name(x)) == core
            && dirname(file_of(x)) == dirname(file_of(l))
    })?;
    let said = |p: &str| p == x.path || x.realpath.as_deref() == Some(p);
    let version = img
        .versions
        .iter()
        .filter(|v| said(&v.path) && v.source == version_source::QUERY)
        .find_map(|v| v.version.clone().filter(|s| s.contains('.')))
        .or_else(|| {
            known
                .get(&x.path)
                .filter(|f| matches!(f.source, Source::Asked | Source::AskedCached))
                .and_then(|f| f.version.clone())
        })
        .or_else(
            || match name_version::of_library(&x.path, x.realpath.as_deref()) {
                Some(name_version::NameVersion::Full(v)) => Some(v),
                _ => None,
            },
        )?;
    Some(Found {
        version: Some(version),
        cuda_build: None,
        max_device: None,
        status: None,
        source: Source::Install,
        detail: format!(
            "the version of {} it loaded from its own directory",
            basename(file_of(x))
        ),
    })
}

/// The version of the pip distribution whose `RECORD` lists the file with
/// the size the trace recorded (a file replaced since installing is not
/// the distribution's).
/// The major in a library's file name (`libcudnn.so.8.7.0` → 8), if any.
fn file_major(path: &str) -> Option<u32> {
    let base = path.rsplit('/').next()?;
    let (_, after) = base.split_once(".so.")?;
    after.split('.').next()?.parse().ok()
}

fn from_package(machine: &Machine, l: &Load) -> Option<Found> {
    let o = machine.package_owner(file_of(l))?;
    if o.size.is_none() || o.size != l.size {
        return None;
    }
    // A distribution's version is the library's only when the package is
    // the library's own release: torch's wheel (1.13.1) carries
    // libcudnn.so.8, and a date-versioned wheel (2022.5.19) is no cuDNN
    // release either. A version whose major is not the file's own
    // (`libcudnn.so.8` → 8) says nothing about the file.
    let version = Ver::parse(&o.version);
    let major = file_major(file_of(l));
    if let (Some(v), Some(m)) = (&version, major) {
        if v.major() != m {
            return None;
        }
    }
    Some(Found {
        version: version.map(|v| v.to_string()),
        cuda_build: None,
        max_device: None,
        status: None,
        source: Source::Package,
        detail: format!(
            "listed in {}'s RECORD with its size ({})",
            o.dist,
            dirname(file_of(l))
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::versions::fake::FakeProber;
    use crate::machine::{FakeDisk, Stamp};
    use crate::model::trace::parse_trace;
    use serde_json::json;
    use std::path::Path;
    use std::sync::Arc;

    const PIP: &str = "/v/lib/python3.12/site-packages/nvidia/cudnn/lib";

    fn load(seq: u64, name: &str, path: &str, requester: &str, ino: u64) -> String {
        json!({"ev":"load","seq":seq,"t_ns":seq,"pid":1,"ppid":0,"tid":1,"name":name,
               "path":path,"realpath":path,"reason":"RUNPATH","reason_owner":requester,
               "search_dir":dirname(path),"requester":requester,"via":"dlopen","mode":2,"lmid":0,
               "soname":basename(path),"dev":7,"ino":ino,"size":1000,"build_id":null,
               "family":cudnn_trace_format::cuda_family(path.as_bytes()),"tried":[],"new":true})
        .to_string()
    }

    fn failed(seq: u64, name: &str, requester: &str) -> String {
        json!({"ev":"load_failed","seq":seq,"t_ns":seq,"pid":1,"ppid":0,"tid":1,"name":name,
               "requester":requester,"via":"dlopen","mode":2,"lmid":0,"family":"cudnn",
               "tried":[],"error":null,"errno":2})
        .to_string()
    }

    fn set(lines: &[String]) -> TraceSet {
        let mut text = crate::testutil::header(1, 0, "exec");
        for l in lines {
            text.push('\n');
            text.push_str(l);
        }
        let (img, probs) = parse_trace(text.as_bytes(), Path::new("1.jsonl"));
        assert!(probs.is_empty(), "{probs:?}");
        TraceSet {
            images: vec![img.unwrap()],
            ..Default::default()
        }
    }

    fn stamp(ino: u64) -> Stamp {
        Stamp {
            dev: 7,
            ino,
            size: 1000,
            mtime_ns: 0,
            ctime_ns: 0,
            build_id: None,
        }
    }

    /// A cuDNN 8 dispatcher whose name has the major only, and whose
    /// directory's RECORD names another package (torch 1.13.1's bundled
    /// copy, pytorch#96595): its version is that of the
    /// `libcudnn_ops_infer.so.8` it loaded from its own directory, not the
    /// one it loaded from elsewhere.
    #[test]
    fn a_cudnn8_dispatcher_has_the_version_of_its_own_core_library() {
        let torch = "/v/lib/python3.10/site-packages/torch/lib";
        let disp = format!("{torch}/libcudnn.so.8");
        let ops = format!("{torch}/libcudnn_ops_infer.so.8");
        let mut d = FakeDisk::default();
        d.with_stamp(&ops, stamp(2));
        let s = set(&[
            load(
                1,
                "libcudnn.so.8",
                &disp,
                &format!("{torch}/libtorch_cuda.so"),
                1,
            ),
            load(2, "libcudnn_ops_infer.so.8", &ops, &disp, 2),
        ]);
        let mut p = FakeProber::default();
        p.answers.insert(
            ops.clone(),
            Answer {
                version: Some(8700),
                ..Default::default()
            },
        );
        let m = Machine::with_disk(d).with_prober(Some(Box::new(Arc::new(p))), None);
        let files = of_set(&s, &m);
        let v = &files[0].versions;
        assert_eq!(v[&disp].version.as_deref(), Some("8.7.0"), "{v:#?}");
        assert_eq!(v[&disp].source, Source::Install);
        // Its core library from another directory says nothing about it.
        let s = set(&[
            load(
                1,
                "libcudnn.so.8",
                &disp,
                &format!("{torch}/libtorch_cuda.so"),
                1,
            ),
            load(
                2,
                "libcudnn_ops_infer.so.8",
                "/usr/lib/libcudnn_ops_infer.so.8.9.7",
                &disp,
                2,
            ),
        ]);
        let files = of_set(&s, &Machine::with_disk(FakeDisk::default()));
        assert!(!files[0].versions.contains_key(&disp), "{files:#?}");
    }

    #[test]
    fn pip_install_versions_from_probe_requests_and_package() {
        let disp = format!("{PIP}/libcudnn.so.9");
        let graph = format!("{PIP}/libcudnn_graph.so.9");
        let ops = format!("{PIP}/libcudnn_ops.so.9");
        let eng = format!("{PIP}/libcudnn_engines_precompiled.so.9");
        let s = set(&[
            load(1, "libcudnn.so.9", &disp, "/app/train", 1),
            failed(2, "libcudnn_graph.so.9.19.0", &disp),
            load(3, "libcudnn_graph.so.9", &graph, &disp, 2),
            load(4, "libcudnn_ops.so.9", &ops, &disp, 3),
            load(5, "libcudnn_engines_precompiled.so.9", &eng, &graph, 4),
        ]);
        let mut p = FakeProber::default();
        p.answers.insert(
            graph.clone(),
            Answer {
                version: Some(91900),
                cudart: Some(13000),
                max_device: Some(1210),
                ..Default::default()
            },
        );
        p.answers.insert(
            ops.clone(),
            Answer {
                status: Some(0),
                ..Default::default()
            },
        );
        let p = Arc::new(p);
        let site = "/v/lib/python3.12/site-packages";
        let mut d = FakeDisk::default();
        d.with_stamp(&graph, stamp(2))
            .with_stamp(&ops, stamp(3))
            .with_stamp(&eng, stamp(4))
            .dir(&format!("{site}/nvidia_cudnn_cu13-9.19.0.56.dist-info"));
        d.texts.insert(
            format!("{site}/nvidia_cudnn_cu13-9.19.0.56.dist-info/RECORD"),
            "nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9,sha256=x,1000\n".into(),
        );
        let m = Machine::with_disk(d).with_prober(Some(Box::new(p.clone())), None);
        let files = of_set(&s, &m);
        let v = &files[0].versions;
        let text = |p: &str| v.get(p).and_then(|f| f.version.clone());
        assert_eq!(text(&graph).as_deref(), Some("9.19.0"));
        assert_eq!(v[&graph].cuda_build, Some(13000));
        assert_eq!(text(&ops).as_deref(), Some("9.19.0"), "{v:#?}");
        assert_eq!(
            v[&ops].detail,
            "cudnnOpsVersionCheck() returned 0 against libcudnn_graph.so.9 (9.19.0) of its directory"
        );
        assert_eq!(text(&disp).as_deref(), Some("9.19.0"));
        assert_eq!(v[&disp].source, Source::Requests);
        assert_eq!(text(&eng).as_deref(), Some("9.19.0.56"));
        assert_eq!(v[&eng].source, Source::Package);
        assert!(files[0].not_asked.is_empty());
        // One process: graph, then ops's check.
        assert_eq!(p.processes.lock().unwrap().len(), 1);
    }

    #[test]
    fn what_the_process_said_is_not_asked_again() {
        let graph = format!("{PIP}/libcudnn_graph.so.9");
        let ops = format!("{PIP}/libcudnn_ops.so.9");
        let q = json!({"ev":"version","seq":9,"t_ns":9,"pid":1,"ppid":0,"tid":1,"path":graph,
            "family":"cudnn","source":"query","version":"9.19.0","raw":91900,"cuda_build":13000,
            "max_device":1210,"check":null,"core":null,"status":null,"driver_file":null,"asked_by":"shim"});
        let c = json!({"ev":"version","seq":10,"t_ns":9,"pid":1,"ppid":0,"tid":1,"path":ops,
            "family":"cudnn","source":"query","version":"9.19.0","raw":null,"cuda_build":null,
            "max_device":null,"check":0,"core":graph,"status":null,"driver_file":null,"asked_by":"program"});
        let s = set(&[
            load(1, "libcudnn_graph.so.9", &graph, "/d/libcudnn.so.9", 2),
            load(2, "libcudnn_ops.so.9", &ops, "/d/libcudnn.so.9", 3),
            q.to_string(),
            c.to_string(),
        ]);
        let p = Arc::new(FakeProber::default());
        let m =
            Machine::with_disk(FakeDisk::default()).with_prober(Some(Box::new(p.clone())), None);
        let files = of_set(&s, &m);
        assert!(files[0].versions.is_empty(), "{files:#?}");
        assert!(p.processes.lock().unwrap().is_empty());
    }

    #[test]
    fn changed_and_gone_files_are_said() {
        let graph = format!("{PIP}/libcudnn_graph.so.9");
        let ops = format!("{PIP}/libcudnn_ops.so.9");
        let s = set(&[
            load(1, "libcudnn_graph.so.9", &graph, "/d/libcudnn.so.9", 2),
            load(2, "libcudnn_ops.so.9", &ops, "/d/libcudnn.so.9", 3),
        ]);
        let mut d = FakeDisk::default();
        let mut bigger = stamp(2);
        bigger.size = 2000;
        d.with_stamp(&graph, bigger);
        let m = Machine::with_disk(d).with_prober(Some(Box::new(FakeProber::default())), None);
        let files = of_set(&s, &m);
        assert_eq!(
            files[0].not_asked,
            vec![
                NotAsked {
                    path: graph,
                    why: "changed since the trace (size 1000 → 2000): not asked".into()
                },
                NotAsked {
                    path: ops,
                    why: "no longer on disk: not asked".into()
                },
            ]
        );
    }
}
