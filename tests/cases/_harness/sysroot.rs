//! Files at system paths (`/usr/lib/x86_64-linux-gnu`, `/var/lib/dpkg`,
//! `/etc/ld.so.conf.d`, …) and the ld.so cache, without touching the machine.
//!
//! glibc reads `/etc/ld.so.cache` only (the path is compiled in), and the
//! package managers' databases live at fixed paths too, so a private cache or
//! database elsewhere proves nothing. Instead the program, the launcher and
//! `report` run in a private mount namespace (`unshare --mount`, as root; else
//! a user namespace, `unshare --user --map-root-user --mount`) where:
//! 1. each system directory that the case stages files under gets a read-only
//!    overlay: the staged files (`<work>/root/<path>`) over the real directory,
//!    so the real files stay visible and the fake ones appear at their real
//!    paths (a stray `/lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9`
//!    owned by `libcudnn9-cuda-12` in `/var/lib/dpkg/info`);
//! 2. `ldconfig -X -C <work>/ld.so.cache` builds a cache from the machine's
//!    `/etc/ld.so.conf` (with the staged `.conf` files and directories), with
//!    `/var/cache/ldconfig` on a tmpfs so that no auxiliary cache is written;
//! 3. that file is bind-mounted over `/etc/ld.so.cache`.
//!
//! Nothing outside the namespace changes; the namespace ends with the command.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// How a private mount namespace can be had on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Root,
    UserNamespace,
}

impl Mode {
    fn unshare_args(self) -> &'static [&'static str] {
        match self {
            Mode::Root => &["--mount", "--propagation", "private"],
            Mode::UserNamespace => &[
                "--user",
                "--map-root-user",
                "--mount",
                "--propagation",
                "private",
            ],
        }
    }
}

/// Whether a mount namespace with an overlay works here; the reason when not.
pub fn mode() -> Result<Mode, String> {
    static MODE: OnceLock<Result<Mode, String>> = OnceLock::new();
    MODE.get_or_init(|| {
        let probe = "d=$(mktemp -d) && mkdir $d/l && mount -t overlay overlay -o lowerdir=$d/l:/etc /etc && ls /etc >/dev/null";
        let mut why = Vec::new();
        for mode in [Mode::Root, Mode::UserNamespace] {
            let out = Command::new("unshare")
                .args(mode.unshare_args())
                .args(["--", "sh", "-c", probe])
                .stdin(Stdio::null())
                .output();
            match out {
                Ok(o) if o.status.success() => return Ok(mode),
                Ok(o) => why.push(format!(
                    "{mode:?}: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                )),
                Err(e) => why.push(format!("{mode:?}: unshare: {e}")),
            }
        }
        Err(why.join("; "))
    })
    .clone()
}

/// The staged system files of one case.
pub struct Sysroot {
    /// `<work>/root`: `<stage>/usr/lib/…` appears at `/usr/lib/…`.
    pub stage: PathBuf,
    cache: PathBuf,
    script: PathBuf,
}

impl Sysroot {
    pub fn new(work: &Path) -> Sysroot {
        Sysroot {
            stage: work.join("root"),
            cache: work.join("ld.so.cache"),
            script: work.join("sysroot.sh"),
        }
    }

    /// Where the file for system path `abs` is staged.
    pub fn staged(&self, abs: &str) -> PathBuf {
        self.stage.join(abs.trim_start_matches('/'))
    }

    /// Writes the namespace set-up script for what is staged now.
    pub fn finish(&self) -> Result<(), String> {
        let mut targets: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
        for leaf in leaves(&self.stage) {
            let rel = leaf.strip_prefix(&self.stage).unwrap();
            let (declared, real) = existing_dir_above(&Path::new("/").join(rel));
            if real == Path::new("/") {
                return Err(format!(
                    "/{}: stage system files under a directory that exists on every machine",
                    rel.display()
                ));
            }
            let lower = self.stage.join(declared.strip_prefix("/").unwrap());
            let v = targets.entry(real).or_default();
            if !v.contains(&lower) {
                v.push(lower);
            }
        }
        // An overlay on a directory covers what is staged below it.
        let all: Vec<PathBuf> = targets.keys().cloned().collect();
        targets.retain(|t, _| !all.iter().any(|o| o != t && t.starts_with(o)));
        let mut s = String::from("set -eu\n");
        for (target, lowers) in &targets {
            let mut l: Vec<String> = lowers.iter().map(|p| p.display().to_string()).collect();
            l.push(target.display().to_string());
            s += &format!(
                "mount -t overlay cdt-case -o 'lowerdir={}' '{}'\n",
                l.join(":"),
                target.display()
            );
        }
        s += &format!(
            "if [ ! -s '{c}' ]; then\n  \
             if [ -d /var/cache/ldconfig ]; then mount -t tmpfs cdt-case /var/cache/ldconfig; fi\n  \
             ldconfig -X -C '{c}.tmp' 2>/dev/null\n  mv '{c}.tmp' '{c}'\nfi\n\
             mount --bind '{c}' /etc/ld.so.cache\nexec \"$@\"\n",
            c = self.cache.display()
        );
        std::fs::write(&self.script, s).map_err(|e| format!("{}: {e}", self.script.display()))
    }

    /// `cmd` run inside the namespace (same program, arguments, environment
    /// changes and directory).
    pub fn wrap(&self, cmd: &Command) -> Result<Command, String> {
        let mode = mode()?;
        let mut w = Command::new("unshare");
        w.args(mode.unshare_args())
            .arg("--")
            .arg("bash")
            .arg(&self.script)
            .arg(cmd.get_program())
            .args(cmd.get_args());
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => w.env(k, v),
                None => w.env_remove(k),
            };
        }
        if let Some(d) = cmd.get_current_dir() {
            w.current_dir(d);
        }
        Ok(w)
    }
}

/// The deepest directory above (or at) `p` that exists on this machine, as
/// declared (under `/`) and as its real path (`/lib/x86_64-linux-gnu` is
/// `/usr/lib/x86_64-linux-gnu` on merged-/usr systems).
fn existing_dir_above(p: &Path) -> (PathBuf, PathBuf) {
    let mut d = p.parent().unwrap_or(Path::new("/")).to_path_buf();
    loop {
        if d.is_dir() {
            let real = std::fs::canonicalize(&d).unwrap_or_else(|_| d.clone());
            return (d, real);
        }
        match d.parent() {
            Some(up) => d = up.to_path_buf(),
            None => return (PathBuf::from("/"), PathBuf::from("/")),
        }
    }
}

/// Every file, symlink and empty directory under `dir`.
fn leaves(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut any = false;
    for e in rd.flatten() {
        any = true;
        let p = e.path();
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if is_dir {
            out.extend(leaves(&p));
        } else {
            out.push(p);
        }
    }
    if !any {
        // An empty directory stands for itself (a dir that must exist).
        out.push(dir.join(".keep"));
    }
    out
}
