//! A work directory that stages a fake CUDA machine for one situation of
//! `tests/findings.rs` and `tests/golden.rs`: pip wheels in a venv's
//! site-packages, system directories, the driver where containers have it,
//! and a program compiled from `tests/findings/` against the fake headers.

use crate::launcher_support::{build_stack, cc, run_cc, work_dir};
use crate::tools;
use std::fs;
use std::path::{Path, PathBuf};

/// Where the programs are staged: a venv's interpreter, as PyTorch's is.
pub const PY: &str = "venv/bin/python3.12";

fn s(p: &Path) -> String {
    p.to_str().expect("UTF-8 path").to_string()
}

/// The C sources of the situations (`tests/findings`).
pub fn sources() -> PathBuf {
    tools::package_dir().join("findings")
}

/// A fresh work directory, `<target>/cdt-launcher/<name>`.
pub struct CaseDir {
    pub dir: PathBuf,
}

impl CaseDir {
    pub fn new(name: &str) -> CaseDir {
        CaseDir {
            dir: work_dir(name),
        }
    }

    pub fn p(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// A pip site-packages directory (`venv/lib/python3.12/site-packages`).
    pub fn site(&self) -> PathBuf {
        self.p("venv/lib/python3.12/site-packages")
    }

    /// `build-stack.sh KIND <dir>/REL OPTIONS...` (`args[0]` is KIND); the directory.
    pub fn stack(&self, rel: &str, args: &[&str]) -> PathBuf {
        let out = self.p(rel);
        self.stack_at(&out, args);
        out
    }

    /// `build-stack.sh KIND OUT OPTIONS...` (`args[0]` is KIND).
    pub fn stack_at(&self, out: &Path, args: &[&str]) {
        build_stack(args[0], out, &args[1..]);
    }

    /// The wheel layout of a pip cuDNN: `SITE/nvidia/cudnn/lib` plus the
    /// `nvidia_cudnn_cuM-V.dist-info` directory that names its version.
    pub fn pip_cudnn(&self, version: &str, cuda: &str, extra: &[&str]) -> PathBuf {
        let lib = self.site().join("nvidia/cudnn/lib");
        let v8 = version.starts_with("8.");
        let kind = if v8 { "cudnn8" } else { "cudnn9" };
        let mut args = vec![kind, "--version", version, "--cuda", cuda];
        args.extend_from_slice(extra);
        self.stack_at(&lib, &args);
        let cu = cuda.split('.').next().unwrap();
        // The build numbers NVIDIA's wheels carry (8.9.7.29, 9.19.0.56).
        let build = if v8 { "29" } else { "56" };
        let info = format!("nvidia_cudnn_cu{cu}-{version}.{build}.dist-info");
        fs::create_dir_all(self.site().join(info)).unwrap();
        lib
    }

    /// The driver's libcuda where containers have it (`usr/local/nvidia/lib64`).
    pub fn driver(&self, version: &str, cuda: &str, extra: &[&str]) -> PathBuf {
        let mut args = vec!["cuda", "--driver", version, "--cuda", cuda];
        args.extend_from_slice(extra);
        self.stack("usr/local/nvidia/lib64", &args)
    }

    /// Compiles `tests/findings/SRC` into `<dir>/OUT` with `${CC:-cc}`, the
    /// fake headers, `extra` flags and `-ldl`; warnings fail it.
    pub fn compile(&self, src: &str, out: &str, extra: &[String]) -> PathBuf {
        let bin = self.p(out);
        fs::create_dir_all(bin.parent().unwrap()).unwrap();
        let mut cmd = cc();
        cmd.args(["-std=gnu11", "-O2", "-Wall", "-Wextra"])
            .arg(format!(
                "-I{}",
                s(&tools::package_dir().join("fixtures/stack"))
            ))
            .arg("-o")
            .arg(&bin)
            .arg(sources().join(src))
            .args(extra)
            .arg("-ldl");
        run_cc(&mut cmd, src, true);
        bin
    }
}

/// `-L DIR -l:SONAME -Wl,--disable-new-dtags,-rpath,DIR`: linked like
/// libtorch_cuda.so (DT_NEEDED found through a DT_RPATH, which beats
/// LD_LIBRARY_PATH).
pub fn link_rpath(dir: &Path, soname: &str) -> Vec<String> {
    vec![
        format!("-L{}", s(dir)),
        format!("-l:{soname}"),
        format!("-Wl,--disable-new-dtags,-rpath,{}", s(dir)),
    ]
}

/// Whether this machine's loader would find `name*` by itself (a default
/// directory or the ld.so cache): a situation about a library that cannot
/// be found cannot be staged then (as in `fixtures/selftest.sh`).
pub fn machine_provides(name: &str) -> bool {
    let dirs = [
        "/lib",
        "/usr/lib",
        "/lib64",
        "/usr/lib64",
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
    ];
    let listed = |d: &str| {
        fs::read_dir(d).is_ok_and(|rd| {
            rd.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(name))
        })
    };
    if dirs.iter().any(|d| listed(d)) {
        return true;
    }
    ["/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"]
        .iter()
        .find_map(|p| std::process::Command::new(p).arg("-p").output().ok())
        .is_some_and(|o| String::from_utf8_lossy(&o.stdout).contains(name))
}
