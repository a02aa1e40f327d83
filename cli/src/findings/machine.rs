//! What the rules look up on the machine the report runs on: directory
//! listings, the ld.so cache, a requester's RPATH/RUNPATH, the kernel
//! driver's version. Behind a trait so that tests use a fake machine, and so
//! that a report made on another host than the trace's can say so.

use crate::model::elf::{self, DynInfo};
use crate::model::stem;
use std::cell::RefCell;
#[cfg(test)]
use std::collections::BTreeMap;
use std::collections::{BTreeSet, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::OnceLock;

/// The machine's files, as far as the rules need them.
pub trait Machine {
    /// File and directory names in a directory (empty when unreadable).
    fn list_dir(&self, dir: &str) -> Vec<String>;
    /// Whether a path names an existing file (following symlinks).
    fn exists(&self, path: &str) -> bool;
    /// `(dev, ino)` of the file a path names (following symlinks).
    fn identity(&self, path: &str) -> Option<(u64, u64)>;
    /// The path with symlinks resolved.
    fn canonical(&self, path: &str) -> Option<String>;
    /// The ld.so cache: `(name, path)` pairs, as `ldconfig -p` lists them.
    fn ld_cache(&self) -> &[(String, String)];
    /// DT_RPATH / DT_RUNPATH / DT_NEEDED / DT_SONAME of an ELF file.
    fn dynamic(&self, path: &str) -> Option<DynInfo>;
    /// The loaded NVIDIA kernel module's version (`/proc/driver/nvidia/version`).
    fn kernel_driver(&self) -> Option<String>;
    /// This machine's host name (to tell whether the trace came from here).
    fn hostname(&self) -> Option<String>;
}

/// The real machine. The ld.so cache, directory listings, dynamic sections
/// and the kernel module's version are read once and kept: the rules ask
/// for the same directories (every copy search scans the same plan) and the
/// same requesters again and again, per library and per process.
#[derive(Default)]
pub struct RealMachine {
    cache: OnceLock<Vec<(String, String)>>,
    dirs: RefCell<HashMap<String, Vec<String>>>,
    dynamic: RefCell<HashMap<String, Option<DynInfo>>>,
    kernel: OnceLock<Option<String>>,
}

impl RealMachine {
    pub fn new() -> Self {
        Self::default()
    }
}

/// Most directory entries read from one directory.
const MAX_ENTRIES: usize = 20_000;

impl Machine for RealMachine {
    fn list_dir(&self, dir: &str) -> Vec<String> {
        self.dirs
            .borrow_mut()
            .entry(dir.to_string())
            .or_insert_with(|| {
                let Ok(rd) = std::fs::read_dir(dir) else {
                    return Vec::new();
                };
                rd.flatten()
                    .take(MAX_ENTRIES)
                    .filter_map(|e| e.file_name().to_str().map(str::to_string))
                    .collect()
            })
            .clone()
    }
    fn exists(&self, path: &str) -> bool {
        std::fs::metadata(path).is_ok_and(|m| m.is_file())
    }
    fn identity(&self, path: &str) -> Option<(u64, u64)> {
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    fn canonical(&self, path: &str) -> Option<String> {
        std::fs::canonicalize(path)
            .ok()
            .and_then(|p| p.to_str().map(str::to_string))
    }
    fn ld_cache(&self) -> &[(String, String)] {
        self.cache.get_or_init(|| {
            // Refuse anything but a regular file (a FIFO would block).
            let ok = std::fs::metadata("/etc/ld.so.cache")
                .is_ok_and(|m| m.is_file() && m.len() < 64 << 20);
            let parsed = if ok {
                std::fs::read("/etc/ld.so.cache")
                    .ok()
                    .and_then(|b| parse_ld_cache(&b))
            } else {
                None
            };
            parsed.or_else(ldconfig_p).unwrap_or_default()
        })
    }
    fn dynamic(&self, path: &str) -> Option<DynInfo> {
        self.dynamic
            .borrow_mut()
            .entry(path.to_string())
            .or_insert_with(|| elf::read_dynamic(Path::new(path)))
            .clone()
    }
    fn kernel_driver(&self) -> Option<String> {
        self.kernel
            .get_or_init(|| {
                let ok =
                    std::fs::metadata("/proc/driver/nvidia/version").is_ok_and(|m| m.is_file());
                if !ok {
                    return None;
                }
                let text = std::fs::read_to_string("/proc/driver/nvidia/version").ok()?;
                parse_nvrm_version(&text)
            })
            .clone()
    }
    fn hostname(&self) -> Option<String> {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its length; gethostname writes at most that.
        let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        if r != 0 {
            return None;
        }
        let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
        std::str::from_utf8(&buf[..end]).ok().map(str::to_string)
    }
}

/// `NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  …` → `580.159.04`
/// (compat-facts §1.3).
pub fn parse_nvrm_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("NVRM version"))?;
    line.split_whitespace()
        .find(|w| {
            w.contains('.')
                && w.split('.').count() >= 2
                && w.split('.')
                    .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
        })
        .map(str::to_string)
}

/// Parses `/etc/ld.so.cache` in glibc's "new" format (`glibc-ld.so.cache1.1`,
/// the only one written since glibc 2.32), also when it follows an old-format
/// (`ld.so-1.7.0`) table. Returns None when the bytes are not such a cache.
///
/// Layout (glibc `dl-cache.h`): 20-byte magic+version, nlibs u32,
/// len_strings u32, flags u8, 3 padding, extension_offset u32, 3 unused u32
/// (48 bytes), then nlibs entries of 24 bytes: flags i32, key u32, value u32,
/// osversion u32, hwcap u64. key/value are offsets of NUL-terminated strings
/// from the start of the new-format header.
pub fn parse_ld_cache(b: &[u8]) -> Option<Vec<(String, String)>> {
    const NEW: &[u8] = b"glibc-ld.so.cache1.1";
    const OLD: &[u8] = b"ld.so-1.7.0";
    let start = if b.starts_with(NEW) {
        0
    } else if b.starts_with(OLD) {
        // Old header: magic (11) + pad to 12 + nlibs u32; entries of 12 bytes;
        // the new table follows, 8-aligned.
        let n = u32::from_le_bytes(b.get(12..16)?.try_into().ok()?) as usize;
        let end = 16usize.checked_add(n.checked_mul(12)?)?;
        let aligned = (end + 7) & !7;
        if b.get(aligned..)?.starts_with(NEW) {
            aligned
        } else {
            return None;
        }
    } else {
        return None;
    };
    let h = b.get(start..)?;
    let u32_at =
        |o: usize| -> Option<u32> { Some(u32::from_le_bytes(h.get(o..o + 4)?.try_into().ok()?)) };
    let nlibs = u32_at(20)? as usize;
    if nlibs > 1_000_000 {
        return None;
    }
    let string = |off: u32| -> Option<String> {
        let s = h.get(off as usize..)?;
        let end = s.iter().position(|&c| c == 0)?;
        std::str::from_utf8(&s[..end]).ok().map(str::to_string)
    };
    let mut out = Vec::with_capacity(nlibs);
    for i in 0..nlibs {
        let e = 48 + i * 24;
        let key = u32_at(e + 4)?;
        let value = u32_at(e + 8)?;
        if let (Some(k), Some(v)) = (string(key), string(value)) {
            out.push((k, v));
        }
    }
    Some(out)
}

/// `ldconfig -p`, parsed, when the cache file could not be read.
fn ldconfig_p() -> Option<Vec<(String, String)>> {
    for prog in ["/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"] {
        let Ok(out) = std::process::Command::new(prog)
            .arg("-p")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
        else {
            continue;
        };
        if !out.status.success() {
            continue;
        }
        return Some(parse_ldconfig_p(&String::from_utf8_lossy(&out.stdout)));
    }
    None
}

/// `\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1` lines.
pub fn parse_ldconfig_p(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let (left, path) = l.split_once(" => ")?;
            let name = left.trim().split(' ').next()?;
            Some((name.to_string(), path.trim().to_string()))
        })
        .collect()
}

/// A file of a CUDA-family library found on the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copy {
    pub path: String,
    /// The same file, symlinks resolved.
    pub realpath: String,
    /// Version from the file name (or the pip package, see `package`).
    pub version: Option<String>,
    /// Where it was found: `LD_LIBRARY_PATH`, `ld.so.cache`, `system`,
    /// `CUDA toolkit`, `pip`, `a directory in the trace`, `conda/venv prefix`.
    pub found_via: String,
    /// For pip installs: the distribution that owns the directory, from its
    /// `*.dist-info` name (`nvidia_cudnn_cu13-9.19.0.56`, compat-facts §5.2).
    pub package: Option<String>,
}

/// Directories where CUDA libraries usually are (compat-facts §5.1).
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
    pub fn new(
        m: &dyn Machine,
        ld_library_path: &[String],
        seen: &[&str],
        exe: Option<&str>,
    ) -> Self {
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

/// Copies of library `name` (any version of the same stem) on the machine:
/// in the plan's directories and in the ld.so cache. Deduplicated by the
/// file they resolve to; at most [`MAX_COPIES`].
pub fn find_copies(m: &dyn Machine, plan: &ScanPlan, name: &str) -> Vec<Copy> {
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
        let version = crate::model::name_version::of_library(&path, Some(&real)).map(|v| v.text());
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
pub fn package_of(m: &dyn Machine, lib_dir: &str) -> Option<String> {
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

/// A fake machine for tests: files with identities, ELF dynamic info,
/// symlinks, a cache and a kernel driver.
#[cfg(test)]
#[derive(Default)]
pub struct FakeMachine {
    /// path → (dev, ino); a symlink maps to its target's identity.
    pub files: BTreeMap<String, (u64, u64)>,
    /// symlink path → target path.
    pub links: BTreeMap<String, String>,
    pub dynamic: BTreeMap<String, DynInfo>,
    pub cache: Vec<(String, String)>,
    pub kernel: Option<String>,
    pub host: Option<String>,
    pub extra_dirs: BTreeSet<String>,
}

#[cfg(test)]
impl FakeMachine {
    pub fn file(&mut self, path: &str) -> &mut Self {
        let n = self.files.len() as u64 + 100;
        self.files.insert(path.to_string(), (1, n));
        self
    }
    pub fn link(&mut self, path: &str, target: &str) -> &mut Self {
        let id = self.files.get(target).copied().unwrap_or((9, 9));
        self.files.insert(path.to_string(), id);
        self.links.insert(path.to_string(), target.to_string());
        self
    }
    pub fn dir(&mut self, path: &str) -> &mut Self {
        self.extra_dirs
            .insert(path.trim_end_matches('/').to_string());
        self
    }
    pub fn elf(&mut self, path: &str, d: DynInfo) -> &mut Self {
        if !self.files.contains_key(path) {
            self.file(path);
        }
        self.dynamic.insert(path.to_string(), d);
        self
    }
}

#[cfg(test)]
impl Machine for FakeMachine {
    fn list_dir(&self, dir: &str) -> Vec<String> {
        let d = format!("{}/", dir.trim_end_matches('/'));
        let mut out = BTreeSet::new();
        for p in self.files.keys().chain(self.extra_dirs.iter()) {
            if let Some(rest) = p.strip_prefix(&d) {
                if let Some(first) = rest.split('/').next().filter(|s| !s.is_empty()) {
                    out.insert(first.to_string());
                }
            }
        }
        out.into_iter().collect()
    }
    fn exists(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }
    fn identity(&self, path: &str) -> Option<(u64, u64)> {
        self.files.get(path).copied()
    }
    fn canonical(&self, path: &str) -> Option<String> {
        if !self.files.contains_key(path) {
            return None;
        }
        let mut p = path.to_string();
        for _ in 0..8 {
            match self.links.get(&p) {
                Some(t) => p = t.clone(),
                None => break,
            }
        }
        Some(p)
    }
    fn ld_cache(&self) -> &[(String, String)] {
        &self.cache
    }
    fn dynamic(&self, path: &str) -> Option<DynInfo> {
        self.dynamic.get(path).cloned()
    }
    fn kernel_driver(&self) -> Option<String> {
        self.kernel.clone()
    }
    fn hostname(&self) -> Option<String> {
        self.host.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_ld_cache_matches_ldconfig() {
        let Ok(bytes) = std::fs::read("/etc/ld.so.cache") else {
            return; // no cache on this machine
        };
        let parsed = parse_ld_cache(&bytes).expect("a glibc ld.so.cache");
        assert!(!parsed.is_empty());
        if let Some(p) = ldconfig_p() {
            let a: BTreeSet<_> = parsed.iter().collect();
            let b: BTreeSet<_> = p.iter().collect();
            assert_eq!(a, b);
        }
        assert!(parsed
            .iter()
            .all(|(n, p)| n.contains(".so") && p.starts_with('/')));
        assert!(!RealMachine::new().ld_cache().is_empty());
    }

    #[test]
    fn cache_parser_refuses_garbage() {
        assert!(parse_ld_cache(b"").is_none());
        assert!(parse_ld_cache(b"hello").is_none());
        let mut b = b"glibc-ld.so.cache1.1".to_vec();
        b.extend_from_slice(&5u32.to_le_bytes()); // 5 entries, no data
        assert!(parse_ld_cache(&b).is_none());
        // A well-formed one-entry cache.
        let mut c = b"glibc-ld.so.cache1.1".to_vec();
        c.extend_from_slice(&1u32.to_le_bytes());
        c.extend_from_slice(&[0u8; 24]); // len_strings, flags, pad, ext, unused
        let strings = 48 + 24;
        let mut e = Vec::new();
        e.extend_from_slice(&0x303i32.to_le_bytes());
        e.extend_from_slice(&(strings as u32).to_le_bytes());
        e.extend_from_slice(&(strings as u32 + 10).to_le_bytes());
        e.extend_from_slice(&[0u8; 12]);
        c.extend_from_slice(&e);
        c.extend_from_slice(b"libx.so.1\0/l/libx.so.1\0");
        assert_eq!(
            parse_ld_cache(&c).unwrap(),
            vec![("libx.so.1".to_string(), "/l/libx.so.1".to_string())]
        );
        assert_eq!(
            parse_ldconfig_p("2 libs found\n\tlibz.so.1 (libc6,x86-64) => /lib/libz.so.1\n"),
            vec![("libz.so.1".to_string(), "/lib/libz.so.1".to_string())]
        );
    }

    #[test]
    fn nvrm_version() {
        let t = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  2 2025\nGCC version:  gcc version 12\n";
        assert_eq!(parse_nvrm_version(t).as_deref(), Some("580.159.04"));
        assert_eq!(parse_nvrm_version("nothing"), None);
    }

    #[test]
    fn copies_are_found_in_the_usual_places() {
        let sp = "/opt/venv/lib/python3.12/site-packages";
        let mut m = FakeMachine::default();
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
}
