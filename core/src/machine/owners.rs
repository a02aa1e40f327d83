//! Which installed package a file belongs to, from the package managers'
//! own databases: dpkg (`/var/lib/dpkg/info/<package>.list` and
//! `/var/lib/dpkg/status`), pacman (`/var/lib/pacman/local/<name>-<version>/{desc,files}`),
//! conda (`<prefix>/conda-meta/<name>-<version>-<build>.json`, whose `files`
//! lists the paths relative to the prefix), pip (the `RECORD` of a
//! `*.dist-info`, [`super::packages`]) and rpm (`rpm -qf`, only where rpm and
//! its database exist: its sqlite/BDB database is not read here).
//!
//! A remedy for a stray copy names this owner ("remove or upgrade the
//! Debian package libcudnn9-cuda-12"), never the directory it lies in: the
//! system's library directory holds everything else too (issue 9, class 1).
//!
//! Each database is read once per report and only when a rule asks: a clean
//! run never lists `/var/lib/dpkg/info`.

use super::Machine;
use std::collections::HashMap;

/// Most bytes read of one package database file (a `.list`, the dpkg
/// status file, a conda record).
const MAX_DB_FILE: usize = 64 << 20;
/// Most conda records read per prefix.
const MAX_CONDA_RECORDS: usize = 4096;

/// The package manager that installed a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Manager {
    Dpkg,
    Rpm,
    Pacman,
    Conda,
    Pip,
}

impl Manager {
    /// The name the package tables (`data/packages.toml`) use.
    pub fn key(self) -> &'static str {
        match self {
            Manager::Dpkg => "apt",
            Manager::Rpm => "rpm",
            Manager::Pacman => "pacman",
            Manager::Conda => "conda",
            Manager::Pip => "pip",
        }
    }

    /// "the Debian package", "the pip distribution", …
    pub fn kind(self) -> &'static str {
        match self {
            Manager::Dpkg => "the Debian package",
            Manager::Rpm => "the RPM package",
            Manager::Pacman => "the pacman package",
            Manager::Conda => "the conda package",
            Manager::Pip => "the pip package",
        }
    }
}

/// The package that owns a file, as its manager names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageOwner {
    pub manager: Manager,
    /// `libcudnn9-cuda-12`, `cudnn`, `nvidia-cudnn-cu13`.
    pub name: String,
    /// As the manager writes it: `9.23.2.1-1`, `8.9.4.25-1+cuda12.2`,
    /// `9.22.0.52-1`, `9.13.1.26`; None when unknown.
    pub version: Option<String>,
    /// conda: the build string (`h092f7fd_3`) and channel.
    pub build: Option<String>,
    /// conda: the environment's prefix (for `conda remove -p PREFIX`).
    pub prefix: Option<String>,
}

impl PackageOwner {
    /// "the Debian package libcudnn9-cuda-12 9.23.2.1-1".
    pub fn words(&self) -> String {
        match &self.version {
            Some(v) => format!("{} {} {v}", self.manager.kind(), self.name),
            None => format!("{} {}", self.manager.kind(), self.name),
        }
    }

    /// The command that removes it.
    pub fn remove_command(&self) -> String {
        match self.manager {
            Manager::Dpkg => format!("sudo apt-get remove {}", self.name),
            Manager::Rpm => format!("sudo dnf remove {}", self.name),
            Manager::Pacman => format!("sudo pacman -R {}", self.name),
            Manager::Conda => match &self.prefix {
                Some(p) => format!("conda remove -p {p} {}", self.name),
                None => format!("conda remove {}", self.name),
            },
            Manager::Pip => format!("pip uninstall {}", self.name),
        }
    }
}

/// The databases read so far.
#[derive(Default)]
pub(super) struct Owners {
    dpkg: Option<Index>,
    pacman: Option<Index>,
    /// conda prefix → its index.
    conda: HashMap<String, Index>,
}

/// path → owner, for the files of one database that matter here (shared
/// objects and loader configuration).
#[derive(Default)]
struct Index {
    by_path: HashMap<String, PackageOwner>,
}

/// Whether a database line names a file worth keeping: shared objects
/// (`.so`, `.so.N`) and `ld.so.conf.d` entries.
fn worth(line: &str) -> bool {
    line.contains(".so") || line.contains("ld.so.conf")
}

/// The spellings of one path that a database may list: itself, with the
/// merged-`/usr` twin (`/lib/x` and `/usr/lib/x`), and its real path's.
fn spellings(m: &Machine, path: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let add = |p: String, out: &mut Vec<String>| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    let mut bases = vec![path.to_string()];
    if let Some(r) = m.canonical(path) {
        bases.push(r);
    }
    for b in bases {
        add(b.clone(), &mut out);
        for (a, z) in [("/lib/", "/usr/lib/"), ("/lib64/", "/usr/lib64/")] {
            if let Some(rest) = b.strip_prefix(a) {
                add(format!("{z}{rest}"), &mut out);
            } else if let Some(rest) = b.strip_prefix(z) {
                add(format!("{a}{rest}"), &mut out);
            }
        }
    }
    out
}

impl Machine {
    /// The package that installed `path` (any spelling of it: a symlink,
    /// its real path, the merged-`/usr` twin), from the package managers'
    /// databases on this machine; None when no database lists it.
    pub fn file_owner(&self, path: &str) -> Option<PackageOwner> {
        if let Some(o) = self.file_owners.borrow().get(path) {
            return o.clone();
        }
        let o = self.find_owner(path);
        self.file_owners
            .borrow_mut()
            .insert(path.to_string(), o.clone());
        o
    }

    fn find_owner(&self, path: &str) -> Option<PackageOwner> {
        let names = spellings(self, path);
        if let Some(o) = names.iter().find_map(|p| self.pip_owner(p)) {
            return Some(o);
        }
        if let Some(o) = names.iter().find_map(|p| self.conda_owner(p)) {
            return Some(o);
        }
        for db in [Manager::Dpkg, Manager::Pacman] {
            self.ensure_index(db);
            let owners = self.owners.borrow();
            let index = match db {
                Manager::Dpkg => owners.dpkg.as_ref(),
                _ => owners.pacman.as_ref(),
            };
            if let Some(o) = index.and_then(|i| names.iter().find_map(|p| i.by_path.get(p))) {
                return Some(o.clone());
            }
        }
        names.iter().find_map(|p| {
            let (name, version) = self.disk.rpm_owner(p)?;
            Some(PackageOwner {
                manager: Manager::Rpm,
                name,
                version: Some(version),
                build: None,
                prefix: None,
            })
        })
    }

    fn pip_owner(&self, path: &str) -> Option<PackageOwner> {
        let o = self.package_owner(path)?;
        Some(PackageOwner {
            manager: Manager::Pip,
            // pip's own spelling of the project name (PEP 503 normalised).
            name: o.name.to_ascii_lowercase().replace('_', "-"),
            version: Some(o.version),
            build: None,
            prefix: None,
        })
    }

    fn ensure_index(&self, db: Manager) {
        let missing = {
            let o = self.owners.borrow();
            match db {
                Manager::Dpkg => o.dpkg.is_none(),
                _ => o.pacman.is_none(),
            }
        };
        if !missing {
            return;
        }
        let index = match db {
            Manager::Dpkg => dpkg_index(self),
            _ => pacman_index(self),
        };
        let mut o = self.owners.borrow_mut();
        match db {
            Manager::Dpkg => o.dpkg = Some(index),
            _ => o.pacman = Some(index),
        }
    }

    /// The conda package that installed `path`: the record in the
    /// `conda-meta` of the nearest prefix above it that lists it.
    fn conda_owner(&self, path: &str) -> Option<PackageOwner> {
        let mut dir = crate::model::dirname(path);
        for _ in 0..6 {
            if dir.len() <= 1 {
                return None;
            }
            if self.list_dir(dir).iter().any(|e| e == "conda-meta") {
                let rel = path.strip_prefix(dir)?.trim_start_matches('/');
                if !self.owners.borrow().conda.contains_key(dir) {
                    let index = conda_index(self, dir);
                    self.owners
                        .borrow_mut()
                        .conda
                        .insert(dir.to_string(), index);
                }
                return self
                    .owners
                    .borrow()
                    .conda
                    .get(dir)?
                    .by_path
                    .get(rel)
                    .cloned();
            }
            dir = crate::model::dirname(dir);
        }
        None
    }
}

/// Every `.list` of `/var/lib/dpkg/info`, with the versions of
/// `/var/lib/dpkg/status`.
fn dpkg_index(m: &Machine) -> Index {
    let info = "/var/lib/dpkg/info";
    let versions = dpkg_versions(m);
    let mut by_path = HashMap::new();
    for f in m.list_dir(info) {
        let Some(pkg) = f.strip_suffix(".list") else {
            continue;
        };
        // `libc6:amd64.list`: the name without its architecture.
        let name = pkg.split(':').next().unwrap_or(pkg).to_string();
        let Some(text) = m.read_text(&format!("{info}/{f}"), MAX_DB_FILE) else {
            continue;
        };
        for line in text.lines().filter(|l| worth(l)) {
            by_path
                .entry(line.trim().to_string())
                .or_insert_with(|| PackageOwner {
                    manager: Manager::Dpkg,
                    name: name.clone(),
                    version: versions.get(&name).cloned(),
                    build: None,
                    prefix: None,
                });
        }
    }
    Index { by_path }
}

/// Package → version of the installed packages in dpkg's status file.
fn dpkg_versions(m: &Machine) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let Some(text) = m.read_text("/var/lib/dpkg/status", MAX_DB_FILE) else {
        return out;
    };
    for stanza in text.split("\n\n") {
        let field = |k: &str| {
            stanza
                .lines()
                .find_map(|l| l.strip_prefix(k))
                .map(|v| v.trim().to_string())
        };
        let installed = field("Status:").is_none_or(|s| s.ends_with("installed"));
        if let (Some(p), Some(v), true) = (field("Package:"), field("Version:"), installed) {
            out.insert(p, v);
        }
    }
    out
}

/// Every package of pacman's local database (`desc` for the name and
/// version, `files` for the paths, written without the leading `/`).
fn pacman_index(m: &Machine) -> Index {
    let local = "/var/lib/pacman/local";
    let mut by_path = HashMap::new();
    for d in m.list_dir(local) {
        let base = format!("{local}/{d}");
        let Some(desc) = m.read_text(&format!("{base}/desc"), MAX_DB_FILE) else {
            continue;
        };
        let (Some(name), version) = (section(&desc, "%NAME%"), section(&desc, "%VERSION%")) else {
            continue;
        };
        let Some(files) = m.read_text(&format!("{base}/files"), MAX_DB_FILE) else {
            continue;
        };
        let mut in_files = false;
        for line in files.lines() {
            if line.starts_with('%') {
                in_files = line == "%FILES%";
                continue;
            }
            if in_files && worth(line) {
                by_path.insert(
                    format!("/{}", line.trim().trim_start_matches('/')),
                    PackageOwner {
                        manager: Manager::Pacman,
                        name: name.clone(),
                        version: version.clone(),
                        build: None,
                        prefix: None,
                    },
                );
            }
        }
    }
    Index { by_path }
}

/// The first line after a `%SECTION%` header of a pacman `desc`.
fn section(text: &str, header: &str) -> Option<String> {
    let mut lines = text.lines();
    lines.find(|l| l.trim() == header)?;
    lines
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
}

/// The records of one conda prefix: relative path → package.
fn conda_index(m: &Machine, prefix: &str) -> Index {
    let meta = format!("{prefix}/conda-meta");
    let mut by_path = HashMap::new();
    let mut records: Vec<String> = m
        .list_dir(&meta)
        .into_iter()
        .filter(|f| f.ends_with(".json"))
        .collect();
    records.sort();
    for r in records.into_iter().take(MAX_CONDA_RECORDS) {
        let Some(text) = m.read_text(&format!("{meta}/{r}"), MAX_DB_FILE) else {
            continue;
        };
        let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        let s = |k: &str| doc[k].as_str().map(str::to_string);
        let Some(name) = s("name") else { continue };
        let owner = PackageOwner {
            manager: Manager::Conda,
            name,
            version: s("version"),
            build: s("build").or_else(|| s("build_string")),
            prefix: Some(prefix.to_string()),
        };
        for f in doc["files"].as_array().into_iter().flatten() {
            if let Some(f) = f.as_str().filter(|f| worth(f)) {
                by_path.insert(f.to_string(), owner.clone());
            }
        }
    }
    Index { by_path }
}

/// The package database entries for `name` that the shared objects of a
/// package carry in their file names: used to tell a file's version from
/// its owner when its own name has the major only.
pub fn version_of_owner(o: &PackageOwner) -> Option<String> {
    let v = o.version.as_deref()?;
    // Epoch (`1:`), Debian revision (`-1`, `-1+cuda12.2`), rpm release.
    let v = v.rsplit_once(':').map_or(v, |(_, r)| r);
    let v = v.split(['-', '+', '_']).next()?;
    (v.split('.').count() >= 2 && v.split('.').all(|p| p.parse::<u32>().is_ok()))
        .then(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::FakeDisk;

    fn disk() -> FakeDisk {
        let mut d = FakeDisk::default();
        d.file("/usr/lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9.23.2")
            .link(
                "/usr/lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9",
                "/usr/lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9.23.2",
            )
            .link(
                "/lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9",
                "/usr/lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9.23.2",
            )
            .file("/var/lib/dpkg/info/libcudnn9-cuda-12.list")
            .file("/var/lib/dpkg/info/libc6:amd64.list")
            .file("/var/lib/dpkg/status");
        d.texts.insert(
            "/var/lib/dpkg/info/libcudnn9-cuda-12.list".into(),
            "/.\n/usr\n/usr/lib\n/usr/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9.23.2\n/usr/lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9\n".into(),
        );
        d.texts.insert(
            "/var/lib/dpkg/info/libc6:amd64.list".into(),
            "/usr/lib/x86_64-linux-gnu/libc.so.6\n".into(),
        );
        d.texts.insert(
            "/var/lib/dpkg/status".into(),
            "Package: libc6\nStatus: install ok installed\nVersion: 2.36-9\n\nPackage: libcudnn9-cuda-12\nStatus: install ok installed\nArchitecture: amd64\nVersion: 9.23.2.1-1\n".into(),
        );
        d
    }

    #[test]
    fn dpkg_owns_a_file_under_any_spelling() {
        let m = Machine::with_disk(disk());
        let o = m
            .file_owner("/lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9")
            .unwrap();
        assert_eq!(o.manager, Manager::Dpkg);
        assert_eq!(o.name, "libcudnn9-cuda-12");
        assert_eq!(o.version.as_deref(), Some("9.23.2.1-1"));
        assert_eq!(o.remove_command(), "sudo apt-get remove libcudnn9-cuda-12");
        assert_eq!(version_of_owner(&o).as_deref(), Some("9.23.2.1"));
        let c = m.file_owner("/usr/lib/x86_64-linux-gnu/libc.so.6").unwrap();
        assert_eq!(
            (c.name.as_str(), c.version.as_deref()),
            ("libc6", Some("2.36-9"))
        );
        assert_eq!(m.file_owner("/opt/x/libcudnn.so.9"), None);
    }

    #[test]
    fn pacman_and_conda_records() {
        let mut d = FakeDisk::default();
        d.file("/usr/lib/libcudnn_engines_tensor_ir.so.9.22.0")
            .file("/var/lib/pacman/local/cudnn-9.22.0.52-1/desc")
            .file("/var/lib/pacman/local/cudnn-9.22.0.52-1/files")
            .file("/opt/conda/envs/j/lib/libcudnn.so.9.10.1")
            .file("/opt/conda/envs/j/conda-meta/cudnn-9.10.1.4-h2b4d8f7_0.json");
        d.texts.insert(
            "/var/lib/pacman/local/cudnn-9.22.0.52-1/desc".into(),
            "%NAME%\ncudnn\n\n%VERSION%\n9.22.0.52-1\n\n".into(),
        );
        d.texts.insert(
            "/var/lib/pacman/local/cudnn-9.22.0.52-1/files".into(),
            "%FILES%\nusr/\nusr/lib/\nusr/lib/libcudnn_engines_tensor_ir.so.9.22.0\n".into(),
        );
        d.texts.insert(
            "/opt/conda/envs/j/conda-meta/cudnn-9.10.1.4-h2b4d8f7_0.json".into(),
            r#"{"name":"cudnn","version":"9.10.1.4","build":"h2b4d8f7_0","files":["lib/libcudnn.so.9.10.1","include/cudnn.h"]}"#.into(),
        );
        let m = Machine::with_disk(d);
        let p = m
            .file_owner("/usr/lib/libcudnn_engines_tensor_ir.so.9.22.0")
            .unwrap();
        assert_eq!((p.manager, p.name.as_str()), (Manager::Pacman, "cudnn"));
        assert_eq!(p.remove_command(), "sudo pacman -R cudnn");
        let c = m
            .file_owner("/opt/conda/envs/j/lib/libcudnn.so.9.10.1")
            .unwrap();
        assert_eq!((c.manager, c.name.as_str()), (Manager::Conda, "cudnn"));
        assert_eq!(c.version.as_deref(), Some("9.10.1.4"));
        assert_eq!(
            c.remove_command(),
            "conda remove -p /opt/conda/envs/j cudnn"
        );
    }

    #[test]
    fn pip_records_name_the_project() {
        let sp = "/v/lib/python3.12/site-packages";
        let mut d = FakeDisk::default();
        d.file(&format!("{sp}/nvidia/cudnn/lib/libcudnn_graph.so.9"))
            .dir(&format!("{sp}/nvidia_cudnn_cu13-9.20.0.48.dist-info"));
        d.texts.insert(
            format!("{sp}/nvidia_cudnn_cu13-9.20.0.48.dist-info/RECORD"),
            "nvidia/cudnn/lib/libcudnn_graph.so.9,sha256=x,10\n".into(),
        );
        let m = Machine::with_disk(d);
        let o = m
            .file_owner(&format!("{sp}/nvidia/cudnn/lib/libcudnn_graph.so.9"))
            .unwrap();
        assert_eq!(
            (o.manager, o.name.as_str()),
            (Manager::Pip, "nvidia-cudnn-cu13")
        );
        assert_eq!(o.version.as_deref(), Some("9.20.0.48"));
    }
}
