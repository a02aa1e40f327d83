//! The machine: what is on the disk of the host the report runs on, as far
//! as the analysis and the pin need it.
//!
//! * [`Machine`] is the value the analysis is handed: one per report, made
//!   before the analysis and shared by every process image and rule. It
//!   answers the questions the rules have about the disk (the copies of a
//!   library a process could have used, the pip package that owns a
//!   directory, the RPATH/RUNPATH of a requester, a file's identity, the
//!   ld.so cache, the kernel module's version) and keeps what it read: each
//!   directory is listed once, each ELF file read once, the ld.so cache and
//!   the kernel module's version read once. The rules never touch the file
//!   system themselves, so they are functions of the trace and of this
//!   value, and their tests hand them a machine over a fake disk.
//!   Reading is on demand, not a scan of everything up front: a clean run
//!   (and `/bin/true` under the launcher) must not pay for listing the
//!   system's library directories.
//! * [`disk`]: the file system behind it, a trait with the real disk and,
//!   for tests, a fake one.
//! * [`pin`]: the inspection of a `--pin` directory (names, links, ELF
//!   headers, permissions), and [`probe`], the out-of-process probe that
//!   asks a cuDNN copy its own versions.
//! * [`versions`]: the versions of traced files asked at report time in
//!   probe processes (what the shim must not ask inside the program), with
//!   the per-user [`cache`].

pub mod cache;
mod copies;
pub mod disk;
pub mod ldcache;
pub mod loader;
pub mod owners;
pub mod packages;
pub mod pin;
pub mod probe;
mod runpath;
pub mod versions;

pub use cache::Stamp;
pub use copies::{Copy, Fit, ScanPlan};
#[cfg(test)]
pub use disk::FakeDisk;
pub use disk::{Disk, RealDisk};
pub use owners::{Manager, PackageOwner};
pub use packages::Owner;
pub use versions::{Asked, ExeProber, Prober, Role, TraceId, Wanted};

use crate::model::elf::DynInfo;
use crate::model::Image;
use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;

/// The machine the report runs on, as the analysis sees it (see the module
/// documentation): its answers, read from its [`Disk`] once and kept.
pub struct Machine {
    disk: Box<dyn Disk>,
    host: Option<String>,
    kernel: OnceCell<Option<String>>,
    ld_cache: OnceCell<Vec<(String, String)>>,
    dirs: RefCell<HashMap<String, Vec<String>>>,
    dynamic: RefCell<HashMap<String, Option<DynInfo>>>,
    owners_pip: RefCell<HashMap<String, Option<Owner>>>,
    /// The package databases read so far ([`owners`]).
    owners: RefCell<owners::Owners>,
    file_owners: RefCell<HashMap<String, Option<PackageOwner>>>,
    versions: versions::Versions,
}

impl Machine {
    /// The machine this runs on. Library files are asked their versions by
    /// this executable's probe subcommand (unless `CUDNN_TRACE_PROBE=0`),
    /// with the per-user cache; [`Machine::with_prober`] names another
    /// executable.
    pub fn this_host() -> Machine {
        let prober = (!versions::probing_disabled())
            .then(ExeProber::this_program)
            .flatten()
            .map(|p| Box::new(p) as Box<dyn Prober>);
        Machine::with_disk(RealDisk).with_prober(prober, cache::Cache::default_dir())
    }

    /// A machine over another disk (tests: `FakeDisk`); it asks no file
    /// its version until given a prober.
    pub fn with_disk(disk: impl Disk + 'static) -> Machine {
        let host = disk.hostname();
        Machine {
            disk: Box::new(disk),
            host,
            kernel: OnceCell::new(),
            ld_cache: OnceCell::new(),
            dirs: RefCell::new(HashMap::new()),
            dynamic: RefCell::new(HashMap::new()),
            owners_pip: RefCell::new(HashMap::new()),
            owners: RefCell::new(owners::Owners::default()),
            file_owners: RefCell::new(HashMap::new()),
            versions: versions::Versions::new(None, None),
        }
    }

    /// Who asks library files their versions (None: nobody), and the cache
    /// directory for the answers (None: no cache). A front end that is not
    /// the `cudnn-trace` binary passes `ExeProber::new(path of the binary)`.
    pub fn with_prober(
        mut self,
        prober: Option<Box<dyn Prober>>,
        cache_dir: Option<std::path::PathBuf>,
    ) -> Machine {
        self.versions = versions::Versions::new(prober, cache_dir);
        self
    }

    /// Asks library files their versions in probe processes (see
    /// [`versions`]): one answer per wanted file, in order. Each file is
    /// asked once per machine; answers are kept in the cache.
    pub fn ask_versions(&self, wanted: &[Wanted]) -> Vec<Asked> {
        self.versions.ask(self.disk.as_ref(), wanted)
    }

    /// The identity of the file a path names (following symlinks): device,
    /// inode, size, times, build-id.
    pub fn stamp(&self, path: &str) -> Option<Stamp> {
        self.disk.stamp(path)
    }

    /// This machine's host name.
    pub fn hostname(&self) -> Option<&str> {
        self.host.as_deref()
    }

    /// Whether a trace taken on `trace_host` was taken here: only then do
    /// this machine's files (copies on disk, a requester's RUNPATH) say
    /// anything about the traced process. Unknown host names count as local.
    pub fn is_local(&self, trace_host: Option<&str>) -> bool {
        match (trace_host, self.hostname()) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        }
    }

    /// The loaded NVIDIA kernel module's version (`/proc/driver/nvidia/version`).
    pub fn kernel_driver(&self) -> Option<&str> {
        self.kernel
            .get_or_init(|| self.disk.kernel_driver())
            .as_deref()
    }

    /// File and directory names in a directory (empty when unreadable).
    pub fn list_dir(&self, dir: &str) -> Vec<String> {
        self.dirs
            .borrow_mut()
            .entry(dir.to_string())
            .or_insert_with(|| self.disk.list_dir(dir))
            .clone()
    }

    /// Whether a path names an existing file (following symlinks).
    pub fn exists(&self, path: &str) -> bool {
        self.disk.exists(path)
    }

    /// `(dev, ino)` of the file a path names (following symlinks).
    pub fn identity(&self, path: &str) -> Option<(u64, u64)> {
        self.disk.identity(path)
    }

    /// The path with symlinks resolved.
    pub fn canonical(&self, path: &str) -> Option<String> {
        self.disk.canonical(path)
    }

    /// A regular file's text, when it is at most `max` bytes.
    pub fn read_text(&self, path: &str, max: usize) -> Option<String> {
        self.disk.read_text(path, max)
    }

    /// The pip distribution whose `RECORD` lists `path` (a file under a
    /// `site-packages`), with the size it lists ([`packages`]).
    pub fn package_owner(&self, path: &str) -> Option<Owner> {
        if let Some(o) = self.owners_pip.borrow().get(path) {
            return o.clone();
        }
        let o = packages::owner(self, path);
        self.owners_pip
            .borrow_mut()
            .insert(path.to_string(), o.clone());
        o
    }

    /// The ld.so cache: `(name, path)` pairs, as `ldconfig -p` lists them.
    pub fn ld_cache(&self) -> &[(String, String)] {
        self.ld_cache.get_or_init(|| self.disk.ld_cache())
    }

    /// DT_RPATH / DT_RUNPATH / DT_NEEDED / DT_SONAME of an ELF file.
    pub fn dynamic(&self, path: &str) -> Option<DynInfo> {
        self.dynamic
            .borrow_mut()
            .entry(path.to_string())
            .or_insert_with(|| self.disk.dynamic(path))
            .clone()
    }

    /// Copies of library `name` (any version of the same stem) that the
    /// process `img` could have used: in the directories of its
    /// [`ScanPlan`] and in the ld.so cache, deduplicated by the file they
    /// resolve to, at most `copies::MAX_COPIES`. None for a trace of another
    /// host.
    pub fn copies(&self, img: &Image, name: &str) -> Vec<Copy> {
        copies::find_copies(self, &ScanPlan::for_image(self, img), name)
    }

    /// The pip distribution owning a `SITE/nvidia/<sub>/lib` directory
    /// (`nvidia_cudnn_cu13-9.19.0.56`); None elsewhere.
    pub fn package_of(&self, lib_dir: &str) -> Option<String> {
        copies::package_of(self, lib_dir)
    }

    /// The RPATH/RUNPATH entries of `requester` that glibc would have
    /// searched for its own request, `$ORIGIN` expanded with the requester's
    /// directory and that of its real path `real`: the kind (`RUNPATH` or
    /// `RPATH`) and `(directory, entry as written)` pairs.
    pub fn search_dirs(
        &self,
        requester: &str,
        real: Option<&str>,
    ) -> Option<(&'static str, Vec<(String, String)>)> {
        runpath::search_dirs(self, requester, real)
    }
}
