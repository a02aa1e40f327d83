//! Validation of a cuDNN pin directory (`docs/pin.md`, "Validation").
//!
//! The pin makes every cuDNN library of a process come from one directory,
//! in production processes too (`cudnn-trace env`). A directory that is not
//! one complete cuDNN install of one version would turn the pin into the
//! very mix-up it exists to prevent, so both the launcher and `env` refuse
//! it before anything runs. What is not wrong but risky (a directory others
//! can write to, a symlink leading elsewhere) is only warned about.
//!
//! Everything is read from the file system (names, symlinks, ELF headers)
//! except the versions inside the libraries, which [`super::probe`] reads in
//! a separate process: loading cuDNN may abort the process that does it.

use crate::machine::probe::{self, Probe};
use crate::model::elf;
use crate::model::io_msg;
use crate::model::Ver;
use cudnn_trace_format::{cudnn_name, pin as vocab};
use serde::{Serialize, Serializer};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What happens to a cuDNN library the pin directory does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PinMode {
    /// The load fails (the loader names the missing `DIR/NAME`).
    #[default]
    Strict,
    /// The normal search runs; the trace records it.
    Warn,
}

impl PinMode {
    /// `strict` or `warn`, as in `CUDNN_TRACE_PIN_MODE`.
    pub fn as_str(self) -> &'static str {
        match self {
            PinMode::Strict => vocab::STRICT,
            PinMode::Warn => vocab::WARN,
        }
    }

    /// The mode a command-line value names, or None.
    pub fn parse(s: &str) -> Option<PinMode> {
        match s {
            vocab::STRICT => Some(PinMode::Strict),
            vocab::WARN => Some(PinMode::Warn),
            _ => None,
        }
    }
}

impl Serialize for PinMode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

fn lossy_path<S: Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

/// A directory that passed validation: what `launcher.json` records as
/// `pin`, and what the launcher and `env` put in the environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PinInfo {
    /// The directory, absolute and canonical (`realpath`).
    #[serde(serialize_with = "lossy_path")]
    pub dir: PathBuf,
    pub mode: PinMode,
    /// cuDNN major (8 or 9), from the dispatcher's name.
    pub major: u32,
    /// `9.19.0`: from the core library (`cudnnGetVersion`) when it could be
    /// read, else from versioned file names, else unknown.
    pub version: Option<String>,
    /// `cudnnGetCudartVersion()`: the CUDA toolkit cuDNN was built with
    /// (`13000` = 13.0).
    pub cuda_build: Option<u64>,
    /// `cudnnGetMaxDeviceVersion()`: the newest GPU architecture it knows
    /// (`1210` = SM 12.1).
    pub max_device: Option<u64>,
    /// Names of the cuDNN files (and symlinks) in the directory, sorted.
    pub files: Vec<String>,
    /// Findings that do not stop the pin, one line each.
    pub warnings: Vec<String>,
}

/// Why a directory cannot be a pin directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinRefusal {
    /// The directory as given.
    pub dir: PathBuf,
    /// One line; names the file at fault.
    pub reason: String,
}

impl std::fmt::Display for PinRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "refusing to pin cuDNN to {}: {}",
            self.dir.display(),
            self.reason
        )
    }
}

/// The sub-libraries each major needs (`libcudnn_<word>.so.<major>`), as
/// in data/cudnn-layout.toml (\[R17\], \[E7\], \[E8\]); the dispatcher
/// `libcudnn.so.<major>` loads them, and a missing one aborts the program on
/// its first cuDNN call \[E6\].
pub fn required_sublibraries(major: u32) -> &'static [&'static str] {
    match major {
        9 => &[
            "graph",
            "engines_precompiled",
            "engines_runtime_compiled",
            "heuristic",
            "ops",
            "cnn",
            "adv",
        ],
        8 => &[
            "ops_infer",
            "ops_train",
            "cnn_infer",
            "cnn_train",
            "adv_infer",
            "adv_train",
        ],
        _ => &[],
    }
}

/// Checks `dir` as a pin directory; reads the versions in a separate process
/// (this executable's hidden `__probe-cudnn` subcommand, which runs the
/// probe helper: `machine::probe`).
pub fn validate(dir: &Path, mode: PinMode) -> Result<PinInfo, PinRefusal> {
    validate_with(dir, mode, &probe::run)
}

/// [`validate`] with another way to read the versions (tests).
pub fn validate_with(
    dir: &Path,
    mode: PinMode,
    prober: &dyn Fn(&Path, u32) -> Result<Probe, String>,
) -> Result<PinInfo, PinRefusal> {
    check(dir, mode, prober).map_err(|reason| PinRefusal {
        dir: dir.to_path_buf(),
        reason,
    })
}

/// One cuDNN name in the directory.
#[derive(Debug)]
struct Entry {
    name: String,
    stem: String,
    version: Vec<u32>,
    /// The file it is (itself, or what its symlink leads to), canonical.
    target: PathBuf,
    /// The metadata of `target`.
    md: fs::Metadata,
    is_link: bool,
    /// The name that tells this entry's version: its own, or the file name
    /// its symlink leads to when that one says more (`libcudnn_ops.so.9` →
    /// `libcudnn_ops.so.9.19.0`).
    version_name: String,
    effective: Vec<u32>,
}

/// How this machine's loader wants a library: ELF class 64 (every target
/// this tool is built for is 64-bit), byte order, and `e_machine`.
const HOST_LITTLE_ENDIAN: bool = cfg!(target_endian = "little");
#[cfg(target_arch = "x86_64")]
const HOST_MACHINE: Option<u16> = Some(62);
#[cfg(target_arch = "aarch64")]
const HOST_MACHINE: Option<u16> = Some(183);
#[cfg(target_arch = "powerpc64")]
const HOST_MACHINE: Option<u16> = Some(21);
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "powerpc64"
)))]
const HOST_MACHINE: Option<u16> = None;

fn host_name() -> String {
    match HOST_MACHINE {
        Some(m) => elf::arch_name(true, m),
        None => "64-bit".into(),
    }
}

/// Why the file at `path` (shown as `shown`) cannot be loaded as a shared
/// library on this machine, from its ELF header.
fn elf_problem(path: &Path, shown: &str) -> Option<String> {
    let read = fs::File::open(path).and_then(|mut f| elf::read_head(&mut f, 64));
    let head = match read {
        Ok(h) => h,
        Err(e) => return Some(format!("{shown} cannot be read ({})", io_msg(&e))),
    };
    if !head.starts_with(elf::MAGIC) {
        return Some(format!("{shown} is not an ELF file (not a shared library)"));
    }
    if head.len() < 64 && head.get(4) != Some(&1) {
        return Some(format!("{shown} is a truncated ELF file"));
    }
    match head[4] {
        2 => {}
        1 => {
            return Some(format!(
                "{shown} is a 32-bit ELF file; this machine loads {} libraries",
                host_name()
            ))
        }
        c => return Some(format!("{shown} has an unknown ELF class ({c})")),
    }
    let little = match head[5] {
        1 => true,
        2 => false,
        d => return Some(format!("{shown} has an unknown ELF byte order ({d})")),
    };
    if little != HOST_LITTLE_ENDIAN {
        return Some(format!(
            "{shown} is built for a machine of the other byte order"
        ));
    }
    // 64 bytes of an ELF64 header: always a header.
    let h = elf::Header::parse(&head)?;
    if let Some(host) = HOST_MACHINE {
        if h.machine != host {
            return Some(format!(
                "{shown} is built for {}, not for this machine ({})",
                elf::arch_name(true, h.machine),
                host_name()
            ));
        }
    }
    let what = match h.e_type {
        elf::ET_DYN => return None,
        elf::ET_REL => "a relocatable object (.o)",
        elf::ET_EXEC => "an executable",
        elf::ET_CORE => "a core dump",
        _ => "an ELF file of unknown type",
    };
    Some(format!("{shown} is {what}, not a shared library"))
}

/// Warnings about who can change `path` (the pin directory or a library):
/// anyone who can write there can put code into every pinned process.
fn access_warnings(path: &Path, what: &str, md: &fs::Metadata, euid: u32, out: &mut Vec<String>) {
    if md.mode() & 0o022 != 0 {
        out.push(format!(
            "{what} {} is writable by group or others (mode {:o}): whoever can write there can put code into every pinned process",
            path.display(),
            md.mode() & 0o7777
        ));
    }
    if md.uid() != euid && md.uid() != 0 {
        out.push(format!(
            "{what} {} is owned by uid {}, not by you (uid {euid}) or root",
            path.display(),
            md.uid()
        ));
    }
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// The name a message uses for a library file: its name when it is in the
/// pin directory, else its full path.
fn shown_file(canon: &Path, target: &Path) -> String {
    match target.parent() {
        Some(p) if p == canon => target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        _ => target.display().to_string(),
    }
}

/// The checks, in the order that gives the most useful first reason.
fn check(
    dir: &Path,
    mode: PinMode,
    prober: &dyn Fn(&Path, u32) -> Result<Probe, String>,
) -> Result<PinInfo, String> {
    let md = fs::metadata(dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "it does not exist".to_string(),
        _ => format!("it cannot be read ({})", io_msg(&e)),
    })?;
    if !md.is_dir() {
        return Err("it is not a directory".into());
    }
    let canon = fs::canonicalize(dir).map_err(|e| format!("it cannot be read ({})", io_msg(&e)))?;
    let entries = read_entries(&canon)?;
    let major = one_major(&entries)?;
    complete_layout(&entries, major)?;
    loadable_here(&canon, &entries)?;
    let name_version = version_by_names(&entries, major)?;

    let me = euid();
    let mut warnings = Vec::new();
    access_warnings(&canon, "pin directory", &md, me, &mut warnings);
    file_warnings(&canon, &entries, me, &mut warnings);

    let mut info = PinInfo {
        dir: canon.clone(),
        mode,
        major,
        version: name_version.clone(),
        cuda_build: None,
        max_device: None,
        files: entries.iter().map(|e| e.name.clone()).collect(),
        warnings,
    };
    // Last, the versions inside the libraries, read in a separate process.
    let core_file = format!(
        "{}.so.{major}",
        probe::core_stem(major).unwrap_or("libcudnn")
    );
    match prober(&canon, major) {
        Err(why) => info.warnings.push(format!(
            "cannot read the cuDNN version in {}: {why}; the pin still applies",
            canon.display()
        )),
        Ok(p) => apply_probe(&p, &core_file, name_version.as_deref(), &mut info)?,
    }
    Ok(info)
}

/// The cuDNN names in `canon` (sorted), and what each one is.
fn read_entries(canon: &Path) -> Result<Vec<Entry>, String> {
    let listing = fs::read_dir(canon)
        .and_then(|rd| {
            rd.map(|e| e.map(|e| e.file_name()))
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(|e| format!("it cannot be read ({})", io_msg(&e)))?;
    let mut names: Vec<(String, String, Vec<u32>)> = listing
        .iter()
        .filter_map(|n| {
            let (stem, version) = cudnn_name(n.as_bytes())?;
            Some((
                n.to_string_lossy().into_owned(),
                String::from_utf8_lossy(stem).into_owned(),
                version,
            ))
        })
        .collect();
    names.sort();
    let mut entries = Vec::new();
    for (name, stem, version) in names {
        let path = canon.join(&name);
        let lmd = fs::symlink_metadata(&path)
            .map_err(|e| format!("{name} cannot be read ({})", io_msg(&e)))?;
        let is_link = lmd.file_type().is_symlink();
        let target = if is_link {
            let link = fs::read_link(&path).unwrap_or_default();
            fs::canonicalize(&path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => format!(
                    "{name} is a symbolic link to {}, which does not exist",
                    link.display()
                ),
                _ => format!(
                    "{name} is a symbolic link to {} that cannot be followed ({})",
                    link.display(),
                    io_msg(&e)
                ),
            })?
        } else {
            path.clone()
        };
        let tmd =
            fs::metadata(&target).map_err(|e| format!("{name} cannot be read ({})", io_msg(&e)))?;
        if !tmd.is_file() {
            return Err(if is_link {
                format!("{name} leads to {}, which is not a file", target.display())
            } else {
                format!("{name} is not a file")
            });
        }
        // What the link leads to tells the version when its name says more.
        let (mut version_name, mut effective) = (name.clone(), version.clone());
        if is_link {
            if let Some(tn) = target.file_name() {
                if let Some((ts, tv)) = cudnn_name(tn.as_bytes()) {
                    if ts == stem.as_bytes() && tv.len() > effective.len() {
                        version_name = tn.to_string_lossy().into_owned();
                        effective = tv;
                    }
                }
            }
        }
        entries.push(Entry {
            name,
            stem,
            version,
            target,
            md: tmd,
            is_link,
            version_name,
            effective,
        });
    }
    Ok(entries)
}

fn has(entries: &[Entry], name: &str) -> bool {
    entries.iter().any(|e| e.name == name)
}

/// One dispatcher, and no file of another major: the major.
fn one_major(entries: &[Entry]) -> Result<u32, String> {
    let major = match (has(entries, "libcudnn.so.8"), has(entries, "libcudnn.so.9")) {
        (false, false) => {
            return Err("it holds no cuDNN dispatcher (libcudnn.so.8 or libcudnn.so.9)".into())
        }
        (true, true) => {
            return Err("it holds both libcudnn.so.8 and libcudnn.so.9; a pin directory must hold one cuDNN version".into())
        }
        (true, false) => 8,
        (false, true) => 9,
    };
    for e in entries {
        if let Some(&m) = e.effective.first() {
            if m != major {
                return Err(format!(
                    "{} is cuDNN {m}, but the dispatcher is libcudnn.so.{major}; a pin directory must hold one cuDNN version",
                    e.version_name
                ));
            }
        }
    }
    Ok(major)
}

/// Every sub-library under the name the loader asks for, `NAME.so.<major>`
/// (DT_NEEDED entries, v8's dlopen calls, and the pin's same-major rule).
fn complete_layout(entries: &[Entry], major: u32) -> Result<(), String> {
    let required = required_sublibraries(major);
    for word in required {
        let stem = format!("libcudnn_{word}");
        let want = format!("{stem}.so.{major}");
        if has(entries, &want) {
            continue;
        }
        if let Some(other) = entries.iter().find(|e| e.stem == stem) {
            return Err(format!(
                "{want} is missing (there is {}, but the loader asks for {want})",
                other.name
            ));
        }
        let list = required
            .iter()
            .map(|w| format!("libcudnn_{w}"))
            .collect::<Vec<_>>();
        let (last, rest) = list.split_last().unwrap_or((&stem, &[]));
        return Err(format!(
            "{want} is missing (cuDNN {major} needs {} and {last}, each as NAME.so.{major})",
            rest.join(", ")
        ));
    }
    Ok(())
}

/// Every file is a shared library this machine can load.
fn loadable_here(canon: &Path, entries: &[Entry]) -> Result<(), String> {
    let mut seen: Vec<&Path> = Vec::new();
    for e in entries {
        if seen.contains(&e.target.as_path()) {
            continue;
        }
        seen.push(&e.target);
        if let Some(why) = elf_problem(&e.target, &shown_file(canon, &e.target)) {
            return Err(why);
        }
    }
    Ok(())
}

/// The versions the file names tell must agree; returns the full version
/// they tell (`9.19.0`), if any. The reference is the core library (the
/// one that answers cudnnGetVersion), else the dispatcher, else the first
/// versioned name.
fn version_by_names(entries: &[Entry], major: u32) -> Result<Option<String>, String> {
    let core_stem = probe::core_stem(major).unwrap_or("libcudnn");
    let full = |e: &&Entry| e.effective.len() >= 2;
    let reference = entries
        .iter()
        .filter(full)
        .find(|e| e.stem == core_stem && e.version == [major])
        .or_else(|| entries.iter().filter(full).find(|e| e.stem == core_stem))
        .or_else(|| entries.iter().filter(full).find(|e| e.stem == "libcudnn"))
        .or_else(|| entries.iter().find(full));
    let Some(r) = reference else {
        return Ok(None);
    };
    for e in entries.iter().filter(full) {
        let n = e.effective.len().min(r.effective.len());
        if e.effective[..n] != r.effective[..n] {
            return Err(format!(
                "{} is cuDNN {}, but {} is cuDNN {} (by their file names); a pin directory must hold one cuDNN version",
                e.version_name,
                Ver(e.effective.clone()),
                r.version_name,
                Ver(r.effective.clone())
            ));
        }
    }
    Ok(entries
        .iter()
        .map(|e| &e.effective)
        .filter(|v| v.len() >= 3)
        .max_by_key(|v| v.len())
        .map(|v| Ver(v.clone()).to_string()))
}

/// Who can change the libraries, and where symlinks lead.
fn file_warnings(canon: &Path, entries: &[Entry], me: u32, warnings: &mut Vec<String>) {
    let mut seen: Vec<&Path> = Vec::new();
    for e in entries {
        if e.is_link && !e.target.starts_with(canon) {
            warnings.push(format!(
                "{} is a symbolic link to {}, outside the pin directory: that file is what pinned processes load",
                canon.join(&e.name).display(),
                e.target.display()
            ));
        }
        if seen.contains(&e.target.as_path()) {
            continue;
        }
        seen.push(&e.target);
        access_warnings(&e.target, "library", &e.md, me, warnings);
    }
}

/// Folds what the probe read into `info`; Err: a refusal reason.
fn apply_probe(
    p: &Probe,
    core_file: &str,
    name_version: Option<&str>,
    info: &mut PinInfo,
) -> Result<(), String> {
    let dir = info.dir.display().to_string();
    if let Some(err) = &p.core.error {
        info.warnings.push(format!(
            "cannot read the cuDNN version in {dir}: {core_file} failed to load in a separate process ({err}); the pin still applies"
        ));
        return Ok(());
    }
    let Some(v) = p.core.version else {
        info.warnings.push(format!(
            "cannot read the cuDNN version in {dir}: {core_file} has no cudnnGetVersion; the pin still applies"
        ));
        return Ok(());
    };
    let reported = Ver::from_cudnn_int(v);
    let text = reported.to_string();
    if reported.major() != info.major {
        return Err(format!(
            "{core_file} reports cuDNN {text} (cudnnGetVersion), but its file name says cuDNN {}",
            info.major
        ));
    }
    if let Some(nv) = name_version {
        // A name may carry a fourth (build) number: compare X.Y.Z.
        let nv3 = nv.split('.').take(3).collect::<Vec<_>>().join(".");
        if nv3 != text {
            return Err(format!(
                "{core_file} reports cuDNN {text} (cudnnGetVersion), but the file names say {nv}"
            ));
        }
    }
    info.version = Some(text.clone());
    info.cuda_build = p.core.cudart;
    info.max_device = p.core.max_device;
    for c in &p.checks {
        if let Some(err) = &c.error {
            info.warnings.push(format!(
                "cannot check {dir}/{} against {core_file}: {err}",
                c.file
            ));
            continue;
        }
        if let Some(status) = c.status.filter(|&s| s != 0) {
            return Err(format!(
                "{} is not the same version as {core_file} ({text}): {} returned {status}{}",
                c.file,
                c.function,
                probe::status_name(info.major, status)
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::probe::{Check, Core};
    use crate::model::elf::machine_name;
    use crate::testutil::tempdir;
    use std::os::unix::fs::{symlink, PermissionsExt};

    /// A minimal ELF header: class, e_type, e_machine.
    fn elf(class: u8, e_type: u16, machine: u16) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = class;
        h[5] = 1;
        h[6] = 1;
        h[16..18].copy_from_slice(&e_type.to_le_bytes());
        h[18..20].copy_from_slice(&machine.to_le_bytes());
        h
    }

    /// Writes a file with mode 0644 whatever the umask (a group-writable
    /// file would add a warning).
    fn write(p: &Path, bytes: &[u8]) {
        fs::write(p, bytes).unwrap();
        fs::set_permissions(p, fs::Permissions::from_mode(0o644)).unwrap();
    }

    fn host_so() -> Vec<u8> {
        elf(2, 3, HOST_MACHINE.unwrap_or(62))
    }

    /// A fake install: every library of `major` as `NAME.so.<major>`, or
    /// with `version`, as the versioned file plus `.so.<major>` and `.so`
    /// symlinks.
    fn install(dir: &Path, major: u32, version: Option<&str>) {
        fs::create_dir_all(dir).unwrap();
        fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).unwrap();
        let mut stems = vec!["libcudnn".to_string()];
        stems.extend(
            required_sublibraries(major)
                .iter()
                .map(|w| format!("libcudnn_{w}")),
        );
        for s in stems {
            let soname = format!("{s}.so.{major}");
            match version {
                None => write(&dir.join(&soname), &host_so()),
                Some(v) => {
                    let file = format!("{s}.so.{v}");
                    write(&dir.join(&file), &host_so());
                    symlink(&file, dir.join(&soname)).unwrap();
                    symlink(&soname, dir.join(format!("{s}.so"))).unwrap();
                }
            }
        }
    }

    fn probe_ok(version: u64, checks: &[(&str, &str, i64)]) -> Probe {
        Probe {
            dir: String::new(),
            major: if version >= 90000 { 9 } else { 8 },
            core: Core {
                file: String::new(),
                error: None,
                version: Some(version),
                cudart: Some(13000),
                max_device: Some(1210),
            },
            checks: checks
                .iter()
                .map(|&(file, function, status)| Check {
                    file: file.into(),
                    function: function.into(),
                    error: None,
                    status: Some(status),
                })
                .collect(),
        }
    }

    fn v(dir: &Path, p: Result<Probe, String>) -> Result<PinInfo, String> {
        validate_with(dir, PinMode::Strict, &|_, _| p.clone()).map_err(|r| r.reason)
    }

    #[test]
    fn modes() {
        assert_eq!(PinMode::parse("strict"), Some(PinMode::Strict));
        assert_eq!(PinMode::parse("warn"), Some(PinMode::Warn));
        assert_eq!(PinMode::parse("Strict"), None);
        assert_eq!(PinMode::default().as_str(), "strict");
        assert_eq!(serde_json::to_string(&PinMode::Warn).unwrap(), "\"warn\"");
    }

    #[test]
    fn valid_pip_layout() {
        let d = tempdir("pin-pip").join("lib");
        install(&d, 9, None);
        let info = v(&d, Ok(probe_ok(91900, &[("libcudnn_ops.so.9", "x", 0)]))).unwrap();
        assert_eq!(info.dir, fs::canonicalize(&d).unwrap());
        assert_eq!(info.major, 9);
        assert_eq!(info.version.as_deref(), Some("9.19.0"));
        assert_eq!(info.cuda_build, Some(13000));
        assert_eq!(info.max_device, Some(1210));
        assert_eq!(info.files.len(), 8);
        assert_eq!(info.files[0], "libcudnn.so.9");
        assert_eq!(info.warnings, Vec::<String>::new());
        let json = serde_json::to_value(&info).unwrap();
        assert_eq!(json["mode"], "strict");
        assert_eq!(json["dir"], d.canonicalize().unwrap().to_str().unwrap());
    }

    #[test]
    fn versions_from_names_when_the_probe_fails() {
        let d = tempdir("pin-named").join("lib");
        install(&d, 8, Some("8.9.7"));
        let info = v(
            &d,
            Err("the probe process did not finish within 20 s".into()),
        )
        .unwrap();
        assert_eq!(info.major, 8);
        assert_eq!(info.version.as_deref(), Some("8.9.7"));
        assert_eq!(info.cuda_build, None);
        assert_eq!(info.files.len(), 7 * 3);
        assert_eq!(
            info.warnings,
            vec![format!(
                "cannot read the cuDNN version in {}: the probe process did not finish within 20 s; the pin still applies",
                info.dir.display()
            )]
        );
    }

    #[test]
    fn directory_problems() {
        let t = tempdir("pin-dir");
        assert_eq!(
            v(&t.join("nope"), Err(String::new())).unwrap_err(),
            "it does not exist"
        );
        fs::write(t.join("f"), b"x").unwrap();
        assert_eq!(
            v(&t.join("f"), Err(String::new())).unwrap_err(),
            "it is not a directory"
        );
        assert_eq!(
            v(&t, Err(String::new())).unwrap_err(),
            "it holds no cuDNN dispatcher (libcudnn.so.8 or libcudnn.so.9)"
        );
        let d = t.join("both");
        install(&d, 9, None);
        fs::write(d.join("libcudnn.so.8"), host_so()).unwrap();
        assert_eq!(
            v(&d, Err(String::new())).unwrap_err(),
            "it holds both libcudnn.so.8 and libcudnn.so.9; a pin directory must hold one cuDNN version"
        );
        fs::remove_file(d.join("libcudnn.so.8")).unwrap();
        fs::write(d.join("libcudnn_ops_infer.so.8.9.7"), host_so()).unwrap();
        assert_eq!(
            v(&d, Err(String::new())).unwrap_err(),
            "libcudnn_ops_infer.so.8.9.7 is cuDNN 8, but the dispatcher is libcudnn.so.9; a pin directory must hold one cuDNN version"
        );
    }

    #[test]
    fn incomplete_layouts() {
        let d = tempdir("pin-layout").join("lib");
        install(&d, 9, None);
        fs::remove_file(d.join("libcudnn_heuristic.so.9")).unwrap();
        assert_eq!(
            v(&d, Err(String::new())).unwrap_err(),
            "libcudnn_heuristic.so.9 is missing (cuDNN 9 needs libcudnn_graph, libcudnn_engines_precompiled, \
             libcudnn_engines_runtime_compiled, libcudnn_heuristic, libcudnn_ops, libcudnn_cnn and libcudnn_adv, \
             each as NAME.so.9)"
        );
        // Only the versioned file, not the name the loader asks for.
        fs::write(d.join("libcudnn_heuristic.so.9.19.0"), host_so()).unwrap();
        assert_eq!(
            v(&d, Err(String::new())).unwrap_err(),
            "libcudnn_heuristic.so.9 is missing (there is libcudnn_heuristic.so.9.19.0, but the loader asks for libcudnn_heuristic.so.9)"
        );
        // A dangling symlink.
        symlink(
            "libcudnn_heuristic.so.9.18.0",
            d.join("libcudnn_heuristic.so.9"),
        )
        .unwrap();
        assert_eq!(
            v(&d, Err(String::new())).unwrap_err(),
            "libcudnn_heuristic.so.9 is a symbolic link to libcudnn_heuristic.so.9.18.0, which does not exist"
        );
        // The dispatcher as a directory.
        let d = tempdir("pin-layout2").join("lib");
        install(&d, 8, None);
        fs::remove_file(d.join("libcudnn.so.8")).unwrap();
        fs::create_dir(d.join("libcudnn.so.8")).unwrap();
        assert_eq!(
            v(&d, Err(String::new())).unwrap_err(),
            "libcudnn.so.8 is not a file"
        );
    }

    #[test]
    fn elf_headers() {
        let d = tempdir("pin-elf").join("lib");
        install(&d, 9, Some("9.19.0"));
        let f = d.join("libcudnn_adv.so.9.19.0");
        let cases: Vec<(Vec<u8>, String)> = vec![
            (
                b"garbage".to_vec(),
                "libcudnn_adv.so.9.19.0 is not an ELF file (not a shared library)".into(),
            ),
            (
                Vec::new(),
                "libcudnn_adv.so.9.19.0 is not an ELF file (not a shared library)".into(),
            ),
            (
                b"\x7fELF\x02\x01".to_vec(),
                "libcudnn_adv.so.9.19.0 is a truncated ELF file".into(),
            ),
            (
                elf(1, 3, 3),
                format!(
                    "libcudnn_adv.so.9.19.0 is a 32-bit ELF file; this machine loads {} libraries",
                    host_name()
                ),
            ),
            (
                elf(2, 2, HOST_MACHINE.unwrap_or(62)),
                "libcudnn_adv.so.9.19.0 is an executable, not a shared library".into(),
            ),
            (
                elf(2, 1, HOST_MACHINE.unwrap_or(62)),
                "libcudnn_adv.so.9.19.0 is a relocatable object (.o), not a shared library".into(),
            ),
        ];
        for (bytes, want) in cases {
            fs::write(&f, &bytes).unwrap();
            assert_eq!(v(&d, Err(String::new())).unwrap_err(), want, "{bytes:?}");
        }
        if let Some(host) = HOST_MACHINE {
            let other = if host == 62 { 183 } else { 62 };
            fs::write(&f, elf(2, 3, other)).unwrap();
            assert_eq!(
                v(&d, Err(String::new())).unwrap_err(),
                format!(
                    "libcudnn_adv.so.9.19.0 is built for 64-bit {}, not for this machine ({})",
                    machine_name(other),
                    host_name()
                )
            );
        }
    }

    #[test]
    fn versions_by_name_must_agree() {
        let d = tempdir("pin-names").join("lib");
        install(&d, 9, Some("9.19.0"));
        fs::write(d.join("libcudnn_ops.so.9.14.0"), host_so()).unwrap();
        assert_eq!(
            v(&d, Err(String::new())).unwrap_err(),
            "libcudnn_ops.so.9.14.0 is cuDNN 9.14.0, but libcudnn_graph.so.9.19.0 is cuDNN 9.19.0 (by their file names); a pin directory must hold one cuDNN version"
        );
        fs::remove_file(d.join("libcudnn_ops.so.9.14.0")).unwrap();
        // A symlink to a file of another version counts as that version.
        fs::remove_file(d.join("libcudnn_cnn.so.9")).unwrap();
        fs::write(d.join("libcudnn_cnn.so.9.18.1"), host_so()).unwrap();
        symlink("libcudnn_cnn.so.9.18.1", d.join("libcudnn_cnn.so.9")).unwrap();
        let e = v(&d, Err(String::new())).unwrap_err();
        assert!(
            e.starts_with("libcudnn_cnn.so.9.18.1 is cuDNN 9.18.1, but libcudnn_graph.so.9.19.0"),
            "{e}"
        );
    }

    #[test]
    fn probe_results() {
        let d = tempdir("pin-probe").join("lib");
        install(&d, 9, Some("9.19.0"));
        // The library disagrees with its name.
        assert_eq!(
            v(&d, Ok(probe_ok(91400, &[]))).unwrap_err(),
            "libcudnn_graph.so.9 reports cuDNN 9.14.0 (cudnnGetVersion), but the file names say 9.19.0"
        );
        assert_eq!(
            v(&d, Ok(probe_ok(8907, &[]))).unwrap_err(),
            "libcudnn_graph.so.9 reports cuDNN 8.9.7 (cudnnGetVersion), but its file name says cuDNN 9"
        );
        // A sub-library of another version.
        let checks = [
            ("libcudnn_ops.so.9", "cudnnOpsVersionCheck", 0),
            ("libcudnn_cnn.so.9", "cudnnCnnVersionCheck", 1002),
        ];
        assert_eq!(
            v(&d, Ok(probe_ok(91900, &checks))).unwrap_err(),
            "libcudnn_cnn.so.9 is not the same version as libcudnn_graph.so.9 (9.19.0): \
             cudnnCnnVersionCheck returned 1002 (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)"
        );
        // The core library did not load: a warning.
        let mut p = probe_ok(91900, &[]);
        p.core.error = Some("libfoo.so: cannot open shared object file".into());
        p.core.version = None;
        let info = v(&d, Ok(p)).unwrap();
        assert_eq!(info.version.as_deref(), Some("9.19.0"));
        assert_eq!(info.warnings.len(), 1, "{:?}", info.warnings);
        assert!(info.warnings[0].contains("libcudnn_graph.so.9 failed to load in a separate process (libfoo.so: cannot open shared object file)"));
        // A sub-library that could not be checked: a warning.
        let mut p = probe_ok(91900, &[]);
        p.checks.push(Check {
            file: "libcudnn_adv.so.9".into(),
            function: "cudnnAdvVersionCheck".into(),
            error: Some("no symbol cudnnAdvVersionCheck".into()),
            status: None,
        });
        let info = v(&d, Ok(p)).unwrap();
        assert_eq!(
            info.warnings,
            vec![format!(
                "cannot check {}/libcudnn_adv.so.9 against libcudnn_graph.so.9: no symbol cudnnAdvVersionCheck",
                info.dir.display()
            )]
        );
    }

    #[test]
    fn warnings_for_open_permissions_and_outside_links() {
        let t = tempdir("pin-warn");
        let d = t.join("lib");
        install(&d, 9, None);
        fs::set_permissions(&d, fs::Permissions::from_mode(0o777)).unwrap();
        fs::set_permissions(
            d.join("libcudnn_ops.so.9"),
            fs::Permissions::from_mode(0o666),
        )
        .unwrap();
        // The adv library lives elsewhere.
        fs::create_dir(t.join("elsewhere")).unwrap();
        fs::rename(
            d.join("libcudnn_adv.so.9"),
            t.join("elsewhere/libcudnn_adv.so.9"),
        )
        .unwrap();
        symlink(
            t.join("elsewhere/libcudnn_adv.so.9"),
            d.join("libcudnn_adv.so.9"),
        )
        .unwrap();
        let info = v(&d, Ok(probe_ok(91900, &[]))).unwrap();
        let c = fs::canonicalize(&d).unwrap();
        let e = fs::canonicalize(t.join("elsewhere")).unwrap();
        assert_eq!(
            info.warnings,
            vec![
                format!("pin directory {} is writable by group or others (mode 777): whoever can write there can put code into every pinned process", c.display()),
                format!("{}/libcudnn_adv.so.9 is a symbolic link to {}/libcudnn_adv.so.9, outside the pin directory: that file is what pinned processes load", c.display(), e.display()),
                format!("library {}/libcudnn_ops.so.9 is writable by group or others (mode 666): whoever can write there can put code into every pinned process", c.display()),
            ]
        );
        fs::set_permissions(&d, fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn warning_for_a_foreign_owner() {
        // Only root can give a file away; elsewhere this is not testable.
        if euid() != 0 {
            return;
        }
        let d = tempdir("pin-owner").join("lib");
        install(&d, 9, None);
        std::os::unix::fs::chown(d.join("libcudnn_cnn.so.9"), Some(12345), None).unwrap();
        let info = v(&d, Ok(probe_ok(91900, &[]))).unwrap();
        assert_eq!(
            info.warnings,
            vec![format!(
                "library {}/libcudnn_cnn.so.9 is owned by uid 12345, not by you (uid 0) or root",
                info.dir.display()
            )]
        );
    }
}
