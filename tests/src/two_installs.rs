//! The two-installs situation shared by `tests/cli.rs` and
//! `tests/compare.rs`: a pip cuDNN 9.19 (wheel layout) that the program links
//! through its DT_RPATH, the system's cuDNN 9.14, a directory holding only the
//! system's graph and engines (the sub-library directory that makes a run bad
//! when it is on LD_LIBRARY_PATH, as in the real report), and the driver. The
//! program is `tests/findings/02_cudnn9_two_installs/main.c` (libcudnn.so.9,
//! then cudnnGetVersion and cudnnOpsVersionCheck).

use crate::case_dir::{link_rpath, CaseDir, PY};
use crate::launcher_support::build_stack;
use std::fs;
use std::path::{Path, PathBuf};

/// The built situation's directories, all under `dir`.
pub struct TwoInstalls {
    pub dir: PathBuf,
    /// `venv/lib/python3.12/site-packages/nvidia/cudnn/lib`: cuDNN 9.19.
    pub pip: PathBuf,
    /// `opt/cudnn-9.14-graph/lib`: the system 9.14's graph and engines.
    pub graph: PathBuf,
    /// `usr/local/nvidia/lib64`: the driver.
    pub driver: PathBuf,
    /// `venv/bin/python3.12`: the program.
    pub prog: PathBuf,
}

fn s(p: &Path) -> String {
    p.to_str().expect("UTF-8 path").to_string()
}

impl TwoInstalls {
    /// Builds the stacks and compiles the program in `dir` (a fresh work
    /// directory).
    pub fn build(dir: PathBuf) -> TwoInstalls {
        let pip = dir.join("venv/lib/python3.12/site-packages/nvidia/cudnn/lib");
        build_stack("cudnn9", &pip, &["--version", "9.19.0", "--cuda", "13.0"]);
        let system = dir.join("usr/lib/x86_64-linux-gnu");
        build_stack(
            "cudnn9",
            &system,
            &["--version", "9.14.0", "--versioned-files"],
        );
        let driver = dir.join("usr/local/nvidia/lib64");
        build_stack(
            "cuda",
            &driver,
            &["--driver", "580.159.04", "--cuda", "13.0"],
        );
        let graph = dir.join("opt/cudnn-9.14-graph/lib");
        link_graph_and_engines(&system, &graph);
        let flags = link_rpath(&pip, "libcudnn.so.9");
        let prog =
            CaseDir { dir: dir.clone() }.compile("02_cudnn9_two_installs/main.c", PY, &flags);
        TwoInstalls {
            dir,
            pip,
            graph,
            driver,
            prog,
        }
    }

    /// LD_LIBRARY_PATH of a good run (the driver only) or a bad one (the
    /// 9.14 graph directory first).
    pub fn ld_path(&self, bad: bool) -> String {
        if bad {
            format!("{}:{}", s(&self.graph), s(&self.driver))
        } else {
            s(&self.driver)
        }
    }
}

/// Symlinks the graph, engine and heuristic sub-libraries of `system` into
/// `graph`.
fn link_graph_and_engines(system: &Path, graph: &Path) {
    fs::create_dir_all(graph).unwrap();
    for e in fs::read_dir(system).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        let keep = ["libcudnn_graph", "libcudnn_engines", "libcudnn_heuristic"];
        if keep.iter().any(|k| name.starts_with(k)) {
            std::os::unix::fs::symlink(system.join(&name), graph.join(&name)).unwrap();
        }
    }
}
