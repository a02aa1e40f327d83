//! Copies of a library on the machine: where a process could have found
//! one (its `LD_LIBRARY_PATH`, the directories its trace names, its
//! Python's site-packages, the system and CUDA toolkit directories, the
//! ld.so cache), and the pip distribution that owns a copy.

use super::Machine;
use crate::model::{basename, name_version, stem, Image};
use serde::Serialize;
use std::collections::BTreeSet;

/// A file of a CUDA-family library found on the machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Copy {
    pub path: String,
    /// The same file, symlinks resolved.
    pub realpath: String,
    /// Version from the file name (or the pip package, see `package`).
    /// In JSON, numbers and this text (`model::version::VersionDoc`).
    #[serde(serialize_with = "crate::model::version::serialize_version_text")]
    pub version: Option<String>,
    /// Where it was found: `LD_LIBRARY_PATH`, `ld.so.cache`, `system`,
    /// `CUDA toolkit`, `pip`, `a directory in the trace`, `conda/venv prefix`.
    pub found_via: String,
    /// For pip installs: the distribution that owns the directory, from its
    /// `*.dist-info` name (`nvidia_cudnn_cu13-9.19.0.56`, [R30]).
    pub package: Option<String>,
}

/// Whether a copy can stand in for a requested name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Its file name is the one asked for.
    Exact,
    /// The same soname major (`libcudart.so.12.4.127` for `libcudart.so.12`),
    /// or the name asked for has none.
    SameMajor,
    /// Another major: another ABI, which the requester cannot use
    /// (`libcudart.so.13` for `libcudart.so.12`, [R7][R8][E1]).
    OtherMajor(u32),
}

impl Copy {
    /// A stub (the toolkit's `lib64/stubs/libcuda.so`, a `libcudart_stub.so`):
    /// for linking only, never a copy to load.
    pub fn is_stub(&self) -> bool {
        let named = |p: &str| p.contains("/stubs/") || basename(p).contains("_stub");
        named(&self.path) || named(&self.realpath)
    }

    /// Whether this copy fits a request for `name`.
    pub fn fit(&self, name: &str) -> Fit {
        if basename(&self.path) == basename(name) {
            return Fit::Exact;
        }
        let major = |n: &str| {
            name_version::so_numbers(n)
                .first()
                .and_then(|m| m.parse::<u32>().ok())
        };
        match (
            major(name),
            major(&self.path).or_else(|| major(&self.realpath)),
        ) {
            (Some(want), Some(have)) if want != have => Fit::OtherMajor(have),
            _ => Fit::SameMajor,
        }
    }
}

/// Directories where CUDA libraries usually are ([R30][R32][R35]).
const SYSTEM_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/lib64",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/local/nvidia/lib64",
    "/usr/local/nvidia/lib",
    "/usr/lib/wsl/lib",
];

/// Most copies listed per library.
pub const MAX_COPIES: usize = 24;

/// Where to look for copies of a library, given what the trace shows: the
/// process's `LD_LIBRARY_PATH`, the directories of every path in the trace,
/// and the site-packages of the Python it ran.
#[derive(Debug, Clone, Default)]
pub struct ScanPlan {
    /// (directory, how it was found), in order of preference.
    pub dirs: Vec<(String, String)>,
    /// Look in the ld.so cache too (false for the empty plan of a trace
    /// taken on another host).
    pub use_cache: bool,
}

impl ScanPlan {
    /// The plan for one process: `ld_library_path` entries, `seen` paths
    /// (loads, tried candidates, requesters), and `exe`.
    pub fn new(m: &Machine, ld_library_path: &[String], seen: &[&str], exe: Option<&str>) -> Self {
        let mut plan = ScanPlan {
            dirs: Vec::new(),
            use_cache: true,
        };
        let mut have = BTreeSet::new();
        let mut add = |d: &str, how: &str, plan: &mut ScanPlan| {
            let d = d.trim_end_matches('/');
            if !d.is_empty() && d.starts_with('/') && have.insert(d.to_string()) {
                plan.dirs.push((d.to_string(), how.to_string()));
            }
        };
        for d in ld_library_path {
            add(d, "LD_LIBRARY_PATH", &mut plan);
        }
        let mut sites = BTreeSet::new();
        for p in seen {
            if let Some(i) = p.rfind('/') {
                if i > 0 {
                    let d = &p[..i];
                    let how = if d.contains("/site-packages/") || d.contains("/dist-packages/") {
                        "pip"
                    } else {
                        "a directory in the trace"
                    };
                    add(d, how, &mut plan);
                }
            }
            for marker in ["/site-packages/", "/dist-packages/"] {
                if let Some(i) = p.find(marker) {
                    sites.insert(p[..i + marker.len() - 1].to_string());
                }
            }
        }
        // sys.prefix of a venv or conda python: PREFIX/bin/python3.x.
        if let Some(exe) = exe {
            if let Some(prefix) = exe.rsplit_once("/bin/").map(|(p, _)| p) {
                let lib = format!("{prefix}/lib");
                for e in m.list_dir(&lib) {
                    if e.starts_with("python") {
                        sites.insert(format!("{lib}/{e}/site-packages"));
                    }
                }
                if !prefix.is_empty() && prefix != "/usr" {
                    add(&lib, "conda/venv prefix", &mut plan);
                }
            }
        }
        for site in &sites {
            let nv = format!("{site}/nvidia");
            let mut subs = m.list_dir(&nv);
            subs.sort();
            for sub in subs {
                add(&format!("{nv}/{sub}/lib"), "pip", &mut plan);
            }
            // cuDNN 8 bundled in torch/lib by conda and "large" wheels [R44].
            add(&format!("{site}/torch/lib"), "pip", &mut plan);
        }
        for d in SYSTEM_DIRS {
            add(d, "system", &mut plan);
        }
        let mut locals: Vec<String> = m
            .list_dir("/usr/local")
            .into_iter()
            .filter(|e| e.starts_with("cuda"))
            .collect();
        locals.sort();
        for e in locals {
            for sub in [
                "lib64",
                "targets/x86_64-linux/lib",
                "targets/sbsa-linux/lib",
                "compat",
                "lib64/stubs",
            ] {
                add(&format!("/usr/local/{e}/{sub}"), "CUDA toolkit", &mut plan);
            }
        }
        plan
    }
}

impl ScanPlan {
    /// The plan of a process image: its LD_LIBRARY_PATH, every path in its
    /// trace (loads, their real paths, requesters and the candidates tried),
    /// its Python's site-packages, the usual system and toolkit
    /// directories. Empty for a trace taken on another host, whose paths say
    /// nothing about this machine's files.
    pub fn for_image(m: &Machine, img: &Image) -> Self {
        if !m.is_local(img.header.hostname.as_deref()) {
            return ScanPlan::default();
        }
        let mut seen: Vec<&str> = Vec::new();
        for l in &img.loads {
            seen.push(&l.path);
            seen.extend(l.realpath.as_deref());
            seen.extend(l.requester.as_deref().filter(|r| !r.is_empty()));
            seen.extend(l.tried.iter().map(|t| t.path.as_str()));
        }
        for fl in &img.failed {
            seen.extend(fl.ev.requester.as_deref().filter(|r| !r.is_empty()));
            seen.extend(fl.ev.tried.iter().map(|t| t.path.as_str()));
        }
        ScanPlan::new(m, &img.ld_library_path(), &seen, img.header.exe.as_deref())
    }
}

/// Copies of library `name` (any version of the same stem) on the machine:
/// in the plan's directories and in the ld.so cache. Deduplicated by the
/// file they resolve to; at most [`MAX_COPIES`].
pub fn find_copies(m: &Machine, plan: &ScanPlan, name: &str) -> Vec<Copy> {
    let st = stem(name);
    if st.is_empty() {
        return Vec::new();
    }
    let prefix = format!("{st}.so");
    let matches = |file: &str| {
        file.starts_with(&prefix)
            && (file.len() == prefix.len() || file[prefix.len()..].starts_with('.'))
    };
    let mut out: Vec<Copy> = Vec::new();
    let mut seen_real = BTreeSet::new();
    let mut push = |path: String, how: &str, out: &mut Vec<Copy>, package: Option<String>| {
        if out.len() >= MAX_COPIES || !m.exists(&path) {
            return;
        }
        let real = m.canonical(&path).unwrap_or_else(|| path.clone());
        if !seen_real.insert(real.clone()) {
            return;
        }
        let version = name_version::of_library(&path, Some(&real)).map(|v| v.text());
        out.push(Copy {
            path,
            realpath: real,
            version,
            found_via: how.to_string(),
            package,
        });
    };
    for (dir, how) in &plan.dirs {
        let mut names: Vec<String> = m.list_dir(dir).into_iter().filter(|f| matches(f)).collect();
        // Longest (most versioned) name first: `libx.so.9.14.0` before `libx.so`.
        names.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        let package = package_of(m, dir);
        for f in names {
            push(format!("{dir}/{f}"), how, &mut out, package.clone());
        }
    }
    if !plan.use_cache {
        return out;
    }
    let mut cache: Vec<&(String, String)> =
        m.ld_cache().iter().filter(|(n, _)| matches(n)).collect();
    cache.sort();
    for (_, p) in cache {
        push(p.clone(), "ld.so.cache", &mut out, None);
    }
    out
}

/// The pip distribution owning a `SITE/nvidia/<sub>/lib` directory: the
/// `*.dist-info` in SITE whose name maps to `<sub>` (`cudnn` →
/// `nvidia_cudnn_cu13-9.19.0.56`); None elsewhere.
pub fn package_of(m: &Machine, lib_dir: &str) -> Option<String> {
    let (nvidia, _) = lib_dir.strip_suffix("/lib")?.rsplit_once('/')?;
    let sub = lib_dir.strip_suffix("/lib")?.rsplit('/').next()?;
    let site = nvidia.strip_suffix("/nvidia")?;
    let entries = m.list_dir(site);
    let want = format!("nvidia_{}", sub.replace('-', "_"));
    let mut found: Vec<&String> = entries
        .iter()
        .filter(|e| e.ends_with(".dist-info"))
        .filter(|e| {
            let name = e.split('-').next().unwrap_or("").to_ascii_lowercase();
            // nvidia_cudnn_cu13, nvidia_cuda_runtime (CUDA 13), nvidia_cuda_runtime_cu12…
            name == want
                || name
                    .strip_prefix(&want)
                    .is_some_and(|r| r.starts_with("_cu"))
        })
        .collect();
    found.sort();
    found
        .first()
        .map(|e| e.trim_end_matches(".dist-info").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::FakeDisk;

    #[test]
    fn copies_are_found_in_the_usual_places() {
        let sp = "/opt/venv/lib/python3.12/site-packages";
        let mut m = FakeDisk::default();
        m.file(&format!("{sp}/nvidia/cudnn/lib/libcudnn_graph.so.9"))
            .dir(&format!("{sp}/nvidia_cudnn_cu13-9.19.0.56.dist-info"))
            .file("/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9.14.0")
            .link(
                "/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9",
                "/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9.14.0",
            )
            .file("/usr/local/cuda-13.0/targets/x86_64-linux/lib/libnvrtc.so.13.0.88")
            .file("/usr/local/cuda-13.0/targets/x86_64-linux/lib/libnvrtc-builtins.so.13.0")
            .file("/elsewhere/libcudnn_graph.so.9");
        m.dir("/usr/local/cuda-13.0");
        m.cache.push((
            "libcudnn_graph.so.9".into(),
            "/elsewhere/libcudnn_graph.so.9".into(),
        ));
        let m = Machine::with_disk(m);
        let plan = ScanPlan::new(
            &m,
            &["/nope".into()],
            &[&format!("{sp}/torch/lib/libtorch_cuda.so")],
            Some("/opt/venv/bin/python3.12"),
        );
        assert!(plan
            .dirs
            .iter()
            .any(|(d, h)| d == &format!("{sp}/nvidia/cudnn/lib") && h == "pip"));
        let c = find_copies(&m, &plan, "libcudnn_graph.so.9.19.0");
        let paths: Vec<(&str, &str)> = c
            .iter()
            .map(|c| (c.path.as_str(), c.found_via.as_str()))
            .collect();
        assert_eq!(
            paths,
            vec![
                (
                    format!("{sp}/nvidia/cudnn/lib/libcudnn_graph.so.9").as_str(),
                    "pip"
                ),
                (
                    "/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9.14.0",
                    "system"
                ),
                ("/elsewhere/libcudnn_graph.so.9", "ld.so.cache"),
            ]
        );
        assert_eq!(c[0].package.as_deref(), Some("nvidia_cudnn_cu13-9.19.0.56"));
        assert_eq!(c[1].version.as_deref(), Some("9.14.0"));
        let n = find_copies(&m, &plan, "libnvrtc.so");
        assert_eq!(n.len(), 1, "{n:?}");
        assert_eq!(n[0].found_via, "CUDA toolkit");
        assert!(find_copies(&m, &plan, "libcublas.so.13").is_empty());
        assert_eq!(stem("/a/libcudnn_graph.so.9.1.0"), "libcudnn_graph");
    }

    #[test]
    fn copies_fit_by_name_and_major() {
        let c = |p: &str, r: &str| Copy {
            path: p.into(),
            realpath: r.into(),
            version: None,
            found_via: "system".into(),
            package: None,
        };
        let x = c("/a/libcudart.so.12", "/a/libcudart.so.12.4.127");
        assert_eq!(x.fit("libcudart.so.12"), Fit::Exact);
        assert_eq!(x.fit("libcudart.so"), Fit::SameMajor);
        assert_eq!(x.fit("libcudart.so.13"), Fit::OtherMajor(12));
        let y = c("/a/libcudart.so", "/a/libcudart.so.13.0.96");
        assert_eq!(y.fit("libcudart.so.12"), Fit::OtherMajor(13));
        assert_eq!(
            c("/a/libnvrtc.so.12.9.86", "/a/libnvrtc.so.12.9.86").fit("libnvrtc.so"),
            Fit::SameMajor
        );
    }
}
