//! The libraries of a process image as the summary and the JSON document
//! show them: one per object that entered the process, with the later
//! requests it served and whether it was unloaded.

use super::files::{Found, ImageFiles, Source};
use crate::model::name_version::{self, NameVersion};
use crate::model::{Folded, Image};
use cudnn_trace_format::read::{Load, Version};
use cudnn_trace_format::CUDA_FAMILY;
use serde::Serialize;
use std::collections::HashMap;

/// One library as the summary shows it.
#[derive(Debug, Clone, Serialize)]
pub struct LibraryView {
    pub family: Option<String>,
    /// What was requested (bare name, path or DT_NEEDED entry).
    pub name: Option<String>,
    pub path: String,
    pub realpath: Option<String>,
    pub version: Option<NameVersion>,
    pub reason: String,
    pub reason_owner: Option<String>,
    pub search_dir: Option<String>,
    /// The search-list entry `search_dir` came from (`$ORIGIN/../lib` as
    /// written in a RUNPATH is the requester's; this is after expansion).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_entry: Option<String>,
    pub requester: Option<String>,
    pub via: String,
    pub lmid: i64,
    pub soname: Option<String>,
    pub build_id: Option<String>,
    pub size: Option<u64>,
    pub dev: Option<u64>,
    pub ino: Option<u64>,
    /// How the family was known: `name`, `soname`, `symbol` (a renamed copy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family_by: Option<String>,
    /// A stub of its family (the toolkit's `stubs/libcuda.so`): never a
    /// copy of the library it stands in for.
    pub stub: bool,
    /// How a version not told by the trace was found (`analysis::files`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<Found>,
    pub seq: u64,
    /// How many identical load events this row stands for: a program that
    /// loads and unloads one library again and again maps it each time
    /// (`docs/trace-format.md`, repeated events).
    pub count: u64,
    /// `seq` of the last of them (`seq` when `count` is 1).
    pub last_seq: u64,
    /// False when only requests served by an already-loaded object were seen.
    pub new: bool,
    /// Later requests served by this object (`new: false` load events).
    pub requests: Vec<RequestView>,
    /// An unload event followed the load.
    pub unloaded: bool,
    /// How many unload events followed the first load (repeats counted).
    pub unloads: u64,
}

/// A request served by an object already loaded.
#[derive(Debug, Clone, Serialize)]
pub struct RequestView {
    pub seq: u64,
    /// How many identical requests this stands for.
    pub count: u64,
    pub name: Option<String>,
    pub path: String,
    pub reason: String,
    pub requester: Option<String>,
    pub via: String,
}

/// The libraries of an image: one per object that entered the process, plus
/// requests served by an object whose own load was not recorded.
pub fn libraries(img: &Image, all: bool) -> Vec<LibraryView> {
    libraries_with(img, all, None)
}

/// [`libraries`], with the versions the machine found for the image's
/// files (`analysis::files`) where the trace has none of its own.
pub fn libraries_with(img: &Image, all: bool, files: Option<&ImageFiles>) -> Vec<LibraryView> {
    let mut out: Vec<LibraryView> = Vec::new();
    // An object is known by its path, its resolved path, and its file
    // identity (a request through another path to the same file).
    let mut by_path: HashMap<(String, i64), usize> = HashMap::new();
    let mut by_file: HashMap<(u64, u64, i64), usize> = HashMap::new();
    let wanted = |l: &Load| all || l.family.is_some();
    let remember = |l: &Load,
                    i: usize,
                    bp: &mut HashMap<(String, i64), usize>,
                    bf: &mut HashMap<(u64, u64, i64), usize>| {
        bp.entry((l.path.clone(), l.lmid)).or_insert(i);
        if let Some(r) = &l.realpath {
            bp.entry((r.clone(), l.lmid)).or_insert(i);
        }
        if let (Some(d), Some(n)) = (l.dev, l.ino) {
            bf.entry((d, n, l.lmid)).or_insert(i);
        }
    };
    let said = queried_versions(img);
    for l in img.loads.iter().filter(|l| l.new && wanted(l)) {
        remember(l, out.len(), &mut by_path, &mut by_file);
        let mut v = view(l);
        // What the library said when asked (graph's cudnnGetVersion,
        // cudaRuntimeGetVersion, cuDriverGetVersion) beats its file name.
        if let Some(q) = said.get(l.path.as_str()) {
            let said = q.version.clone().unwrap_or_default();
            v.version = Some(match v.version.take() {
                // libcuda: keep the driver version its file name gives.
                Some(NameVersion::Driver(d)) => NameVersion::Driver(format!("{d}, CUDA {said}")),
                _ => NameVersion::Reported(said),
            });
        } else if let Some(f) = files.and_then(|f| f.versions.get(&l.path)) {
            v.version = found_version(v.version.take(), f);
            v.found = Some(f.clone());
        }
        out.push(v);
    }
    for l in img.loads.iter().filter(|l| !l.new && wanted(l)) {
        let found = by_path
            .get(&(l.path.clone(), l.lmid))
            .or_else(|| {
                l.realpath
                    .as_ref()
                    .and_then(|r| by_path.get(&(r.clone(), l.lmid)))
            })
            .or_else(|| match (l.dev, l.ino) {
                (Some(d), Some(n)) => by_file.get(&(d, n, l.lmid)),
                _ => None,
            })
            .copied();
        match found {
            Some(i) => out[i].requests.push(RequestView {
                seq: l.seq,
                count: l.count,
                name: l.name.clone(),
                path: l.path.clone(),
                reason: l.reason.clone(),
                requester: l.requester.clone(),
                via: l.via.clone(),
            }),
            None => {
                remember(l, out.len(), &mut by_path, &mut by_file);
                out.push(view(l));
            }
        }
    }
    for u in &img.unloads {
        if let Some(&i) = by_path.get(&(u.path.clone(), u.lmid)) {
            // Any of the folded unloads after the first load.
            if u.last_seq > out[i].seq {
                out[i].unloaded = true;
                out[i].unloads += u.count;
            }
        }
    }
    out.sort_by_key(|v| (family_rank(v.family.as_deref()), v.seq));
    out
}

/// The first version each library said when asked, by path.
fn queried_versions(img: &Image) -> HashMap<&str, &Version> {
    let mut said = HashMap::new();
    for q in img
        .versions
        .iter()
        .filter(|q| q.source == cudnn_trace_format::version_source::QUERY && q.version.is_some())
    {
        said.entry(q.path.as_str()).or_insert(&q.ev);
    }
    said
}

/// Libraries recorded outside the CUDA family (traces taken with `--all`).
pub fn other_count(img: &Image) -> usize {
    img.loads
        .iter()
        .filter(|l| l.new && l.family.is_none())
        .count()
}

/// The version to show, given the name's and one found elsewhere: an
/// answer asked at report time beats the name; the names a library asked
/// for and its package only fill in for a name that has the major only.
fn found_version(name: Option<NameVersion>, f: &Found) -> Option<NameVersion> {
    let Some(said) = f.version.clone() else {
        return name;
    };
    match (name, f.source) {
        (Some(NameVersion::Driver(d)), _) => Some(NameVersion::Driver(format!("{d}, CUDA {said}"))),
        (_, Source::Asked | Source::AskedCached) => Some(NameVersion::Asked(said)),
        (Some(full @ NameVersion::Full(_)), _) => Some(full),
        (_, Source::Requests) => Some(NameVersion::Requested(said)),
        (_, Source::Package) => Some(NameVersion::Package(said)),
        (_, Source::Install) => Some(NameVersion::Install(said)),
    }
}

fn family_rank(f: Option<&str>) -> usize {
    match f {
        Some(f) => CUDA_FAMILY
            .iter()
            .position(|(_, fam)| *fam == f)
            .unwrap_or(CUDA_FAMILY.len()),
        None => CUDA_FAMILY.len() + 1,
    }
}

fn view(l: &Folded<Load>) -> LibraryView {
    LibraryView {
        family: l.family.clone(),
        name: l.name.clone(),
        path: l.path.clone(),
        realpath: l.realpath.clone(),
        version: name_version::of_library(&l.path, l.realpath.as_deref()),
        reason: l.reason.clone(),
        reason_owner: l.reason_owner.clone(),
        search_dir: l.search_dir.clone(),
        search_entry: l.search_entry.clone(),
        requester: l.requester.clone(),
        via: l.via.clone(),
        lmid: l.lmid,
        soname: l.soname.clone(),
        build_id: l.build_id.clone(),
        size: l.size,
        dev: l.dev,
        ino: l.ino,
        family_by: l.family_by.clone(),
        stub: l.stub,
        found: None,
        seq: l.seq,
        count: l.count,
        last_seq: l.last_seq,
        new: l.new,
        requests: Vec::new(),
        unloaded: false,
        unloads: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{image, load};

    #[test]
    fn same_file_through_another_path_is_one_library() {
        let a = r#"{"ev":"load","seq":1,"t_ns":1,"pid":1,"ppid":0,"tid":1,"name":"libcudart.so.13","path":"/v/torch/lib/../../nvidia/cu13/lib/libcudart.so.13","realpath":"/v/nvidia/cu13/lib/libcudart.so.13","reason":"RPATH","reason_owner":"/v/torch/lib/libtorch_global_deps.so","search_dir":null,"requester":"/v/torch/lib/libtorch_global_deps.so","via":"needed","mode":null,"lmid":0,"soname":null,"dev":7,"ino":99,"size":3,"build_id":null,"family":"cudart","tried":[],"new":true}"#;
        let b = r#"{"ev":"load","seq":2,"t_ns":2,"pid":1,"ppid":0,"tid":1,"name":"/w/libcudart.so.13","path":"/w/libcudart.so.13","realpath":"/w/libcudart.so.13","reason":"same-file","reason_owner":null,"search_dir":null,"requester":"/x/_ctypes.so","via":"loader","mode":null,"lmid":0,"soname":null,"dev":7,"ino":99,"size":3,"build_id":null,"family":"cudart","tried":[],"new":false}"#;
        let img = image(1, 0, "exec", &[a.to_string(), b.to_string()], "1.jsonl");
        let libs = libraries(&img, false);
        assert_eq!(libs.len(), 1);
        assert_eq!(libs[0].requests.len(), 1);
        assert_eq!(libs[0].requests[0].reason, "same-file");
    }

    #[test]
    fn already_loaded_and_unloads() {
        let a = load(
            1,
            1,
            "/l/libcudnn.so.9",
            "/l/libcudnn.so.9",
            "LD_LIBRARY_PATH",
            "",
            "/x/libtorch.so",
            "dlopen",
            true,
        );
        let b = load(
            1,
            2,
            "/l/libcudnn.so.9",
            "/l/libcudnn.so.9",
            "already-loaded",
            "",
            "/y/libother.so",
            "dlopen",
            false,
        );
        let c = load(
            1,
            3,
            "/m/libcudart.so.13",
            "/m/libcudart.so.13.0.1",
            "already-loaded",
            "",
            "/y/libother.so",
            "dlopen",
            false,
        );
        let u = r#"{"ev":"unload","seq":4,"t_ns":5,"pid":1,"ppid":0,"tid":1,"path":"/l/libcudnn.so.9","lmid":0,"family":"cudnn"}"#.to_string();
        let img = image(1, 0, "exec", &[a, b, c, u], "1.jsonl");
        let libs = libraries(&img, false);
        assert_eq!(libs.len(), 2);
        assert_eq!(libs[0].family.as_deref(), Some("cudnn"));
        assert_eq!(libs[0].requests.len(), 1);
        assert!(libs[0].unloaded);
        assert_eq!(libs[1].family.as_deref(), Some("cudart"));
        assert!(!libs[1].new);
        assert_eq!(libs[1].version, Some(NameVersion::Full("13.0.1".into())));
    }
}
