//! What the dynamic loader would find for a request, re-run against this
//! machine's disk: the search glibc's `_dl_map_object` does for a bare name
//! (ld.so(8), "Rpath token expansion" and the search order):
//!
//! 1. the requester's DT_RPATH, when it has no DT_RUNPATH, then the
//!    executable's DT_RPATH (when the executable has no DT_RUNPATH);
//! 2. `LD_LIBRARY_PATH` as it was when the process started (glibc reads it
//!    once, at start-up: a later `setenv` changes nothing for the loader);
//! 3. the requester's DT_RUNPATH (its own only: RUNPATH is not inherited);
//! 4. the ld.so cache;
//! 5. the default directories.
//!
//! Hardware-capability subdirectories are not tried: the result names the
//! search-list entry, which is what a remedy can change.
//! Sources: <https://man7.org/linux/man-pages/man8/ld.so.8.html>,
//! glibc `elf/dl-load.c` (`_dl_map_object`).

use super::Machine;
use crate::model::basename;

/// The default directories of glibc on the usual distributions (Debian's
/// multiarch directories, then the lib64 and lib ones).
pub const DEFAULT_DIRS: &[&str] = &[
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];

/// One request to search for.
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    /// The name asked for (a bare name, or a path).
    pub name: &'a str,
    /// The object that asked, and its real path.
    pub requester: Option<&'a str>,
    pub requester_real: Option<&'a str>,
    /// The program (its DT_RPATH is searched after the requester's).
    pub exe: Option<&'a str>,
    /// `LD_LIBRARY_PATH` at the process's start, split.
    pub ld_library_path: &'a [String],
}

/// Where the search ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The file found (as the search spelled it).
    pub path: String,
    /// `RPATH`, `LD_LIBRARY_PATH`, `RUNPATH`, `ld.so.cache`, `default-dir`, `path`.
    pub step: &'static str,
    /// The search-list entry (as written, `$ORIGIN/…` for RPATH/RUNPATH).
    pub entry: String,
    /// The object whose RPATH/RUNPATH it came through.
    pub owner: Option<String>,
}

impl Machine {
    /// What the loader would load for `req` on this machine now; None when
    /// the search would find nothing.
    pub fn would_find(&self, req: &Request<'_>) -> Option<Hit> {
        let name = req.name;
        if name.contains('/') {
            return self.exists(name).then(|| Hit {
                path: name.to_string(),
                step: "path",
                entry: crate::model::dirname(name).to_string(),
                owner: None,
            });
        }
        let in_dir = |dir: &str| {
            let p = format!("{}/{name}", dir.trim_end_matches('/'));
            self.exists(&p).then_some(p)
        };
        let requester = req.requester.filter(|r| r.starts_with('/'));
        let own = requester.and_then(|r| {
            self.dynamic(r)
                .or_else(|| req.requester_real.and_then(|x| self.dynamic(x)))
        });
        let has_runpath = own.as_ref().is_some_and(|d| !d.runpath.is_empty());
        // 1. DT_RPATH of the requester, then of the executable.
        if !has_runpath {
            let mut owners: Vec<(&str, Option<&str>)> = Vec::new();
            if let Some(r) = requester {
                owners.push((r, req.requester_real));
            }
            if let Some(e) = req.exe.filter(|e| Some(*e) != requester) {
                let exe_runpath = self.dynamic(e).is_some_and(|d| !d.runpath.is_empty());
                if !exe_runpath {
                    owners.push((e, None));
                }
            }
            for (o, real) in owners {
                if let Some(("RPATH", dirs)) = self.search_dirs(o, real) {
                    for (d, entry) in dirs {
                        if let Some(p) = in_dir(&d) {
                            return Some(Hit {
                                path: p,
                                step: "RPATH",
                                entry,
                                owner: Some(o.to_string()),
                            });
                        }
                    }
                }
            }
        }
        // 2. LD_LIBRARY_PATH at start-up.
        for d in req.ld_library_path.iter().filter(|d| !d.is_empty()) {
            if let Some(p) = in_dir(d) {
                return Some(Hit {
                    path: p,
                    step: "LD_LIBRARY_PATH",
                    entry: d.clone(),
                    owner: None,
                });
            }
        }
        // 3. DT_RUNPATH of the requester.
        if has_runpath {
            if let Some((_, dirs)) = requester.and_then(|r| self.search_dirs(r, req.requester_real))
            {
                for (d, entry) in dirs {
                    if let Some(p) = in_dir(&d) {
                        return Some(Hit {
                            path: p,
                            step: "RUNPATH",
                            entry,
                            owner: requester.map(str::to_string),
                        });
                    }
                }
            }
        }
        // 4. The ld.so cache, by the exact name.
        let wanted = basename(name);
        if let Some((_, p)) = self
            .ld_cache()
            .iter()
            .find(|(n, p)| n == wanted && self.exists(p))
        {
            return Some(Hit {
                path: p.clone(),
                step: "ld.so.cache",
                entry: crate::model::dirname(p).to_string(),
                owner: None,
            });
        }
        // 5. The default directories.
        DEFAULT_DIRS.iter().find_map(|d| {
            in_dir(d).map(|p| Hit {
                path: p,
                step: "default-dir",
                entry: d.to_string(),
                owner: None,
            })
        })
    }

    /// Whether `dir` is one of the loader's default directories or a
    /// directory of the system's library path (what "remove it from the
    /// ld.so cache" would take from every program on the machine).
    pub fn is_system_dir(&self, dir: &str) -> bool {
        let d = dir.trim_end_matches('/');
        let d = d.strip_prefix("/usr").unwrap_or(d);
        DEFAULT_DIRS
            .iter()
            .any(|x| x.strip_prefix("/usr").unwrap_or(x) == d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::FakeDisk;
    use crate::model::elf::DynInfo;

    fn rp(rpath: &[&str], runpath: &[&str]) -> DynInfo {
        DynInfo {
            rpath: rpath.iter().map(|s| s.to_string()).collect(),
            runpath: runpath.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn search_order_of_glibc() {
        let mut d = FakeDisk::default();
        d.elf("/v/torch/lib/libtorch_cuda.so", rp(&[], &["$ORIGIN"]))
            .file("/v/torch/lib/libcudnn.so.9")
            .file("/opt/cudnn/lib/libcudnn.so.9")
            .file("/usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0")
            .elf(
                "/v/jax/plugin.so",
                rp(&["$ORIGIN/../nvidia/cudnn/lib"], &[]),
            )
            .file("/v/nvidia/cudnn/lib/libcudnn.so.9");
        d.cache.push((
            "libcudnn.so.9".into(),
            "/usr/lib/x86_64-linux-gnu/libcudnn.so.9.1.0".into(),
        ));
        let m = Machine::with_disk(d);
        let llp = vec!["/opt/cudnn/lib".to_string()];
        let find = |r: &str, llp: &[String]| {
            m.would_find(&Request {
                name: "libcudnn.so.9",
                requester: Some(r),
                ld_library_path: llp,
                ..Default::default()
            })
            .unwrap()
        };
        // LD_LIBRARY_PATH before RUNPATH.
        let h = find("/v/torch/lib/libtorch_cuda.so", &llp);
        assert_eq!(
            (h.path.as_str(), h.step),
            ("/opt/cudnn/lib/libcudnn.so.9", "LD_LIBRARY_PATH")
        );
        // RPATH before LD_LIBRARY_PATH.
        let h = find("/v/jax/plugin.so", &llp);
        assert_eq!(
            (h.step, h.entry.as_str()),
            ("RPATH", "$ORIGIN/../nvidia/cudnn/lib")
        );
        // Without LD_LIBRARY_PATH: RUNPATH; without anything: the cache.
        let h = find("/v/torch/lib/libtorch_cuda.so", &[]);
        assert_eq!(h.path, "/v/torch/lib/libcudnn.so.9");
        let h = find("/nowhere/x.so", &[]);
        assert_eq!(h.step, "ld.so.cache");
        assert!(m.is_system_dir("/lib/x86_64-linux-gnu/"));
        assert!(m.is_system_dir("/usr/lib"));
        assert!(!m.is_system_dir("/usr/local/cuda/lib64"));
    }
}
