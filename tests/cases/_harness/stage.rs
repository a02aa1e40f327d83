//! Builds a case's situation in its work directory: the fake installs
//! (`build-stack.sh`, shared through the stack cache), the package managers'
//! records, the case's own libraries and program, extra files; system paths
//! go through [`Sysroot`].

use super::spec::{Case, Conda, Dpkg, Link, Pacman, Pip, Stack};
use super::sysroot::Sysroot;
use cudnn_trace_integration::launcher_support::{build_stack, cc, run_cc};
use cudnn_trace_integration::tools;
use std::fs;
use std::path::{Path, PathBuf};

/// A staged case, ready to run.
pub struct Staged {
    pub sysroot: Option<Sysroot>,
    pub program: PathBuf,
}

/// Where things are: the work directory and, for absolute paths, the sysroot.
pub struct Places<'a> {
    pub work: &'a Path,
    pub sysroot: &'a Sysroot,
}

impl Places<'_> {
    /// `{W}` replaced by the work directory.
    pub fn expand(&self, s: &str) -> String {
        s.replace("{W}", &self.work.display().to_string())
    }

    /// Where to write `at` on this machine: a system path under the stage,
    /// anything else under the work directory.
    pub fn on_disk(&self, at: &str) -> PathBuf {
        let at = self.expand(at);
        if let Some(rel) = at.strip_prefix(&format!("{}/", self.work.display())) {
            return self.work.join(rel);
        }
        if at.starts_with('/') {
            self.sysroot.staged(&at)
        } else {
            self.work.join(at)
        }
    }

    /// The path the program sees for `at` (system paths as they are).
    pub fn seen(&self, at: &str) -> String {
        let at = self.expand(at);
        if at.starts_with('/') || at.starts_with('$') {
            at
        } else {
            self.work.join(at).display().to_string()
        }
    }

    /// A link-only stack's directory.
    fn link_dir(&self, at: &str) -> PathBuf {
        self.work.join(".link").join(at.trim_start_matches('/'))
    }
}

fn is_system(p: &Places<'_>, at: &str) -> bool {
    let at = p.expand(at);
    at.starts_with('/') && !at.starts_with(&p.work.display().to_string())
}

fn io<T>(r: std::io::Result<T>, what: &Path) -> Result<T, String> {
    r.map_err(|e| format!("{}: {e}", what.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(d) = path.parent() {
        io(fs::create_dir_all(d), d)?;
    }
    io(fs::write(path, text), path)
}

/// Builds everything the case needs in `work` (which must be empty).
pub fn stage(case_dir: &Path, case: &Case, work: &Path) -> Result<Staged, String> {
    let sysroot = Sysroot::new(work);
    let places = Places {
        work,
        sysroot: &sysroot,
    };
    let mut dpkg_status = String::new();
    for (i, s) in case.stack.iter().enumerate() {
        let names = build(&places, s, i)?;
        records(&places, s, &names, &mut dpkg_status)?;
    }
    if !dpkg_status.is_empty() {
        // The machine's own status file, with the case's packages added.
        let real = fs::read_to_string("/var/lib/dpkg/status").unwrap_or_default();
        write(
            &sysroot.staged("/var/lib/dpkg/status"),
            &format!("{real}{dpkg_status}"),
        )?;
    }
    for l in &case.library {
        let out = places.on_disk(&l.at);
        let mut extra = vec!["-shared".to_string(), "-fPIC".to_string()];
        let soname = l.soname.clone().unwrap_or_else(|| {
            out.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        extra.push(format!("-Wl,-soname,{soname}"));
        compile(&places, case_dir, &l.source, &out, &l.link, extra)?;
    }
    for f in &case.file {
        file_op(&places, f)?;
    }
    let program = places.on_disk(&case.program.at);
    compile(
        &places,
        case_dir,
        &case.program.source,
        &program,
        &case.program.link,
        Vec::new(),
    )?;
    // Link-time copies and the stacks' own build directories go: the run
    // must see only what the case put in place.
    for d in [work.join(".link"), work.join(".stacks")] {
        if d.exists() {
            io(fs::remove_dir_all(&d), &d)?;
        }
    }
    let uses_sysroot = sysroot.stage.exists();
    if uses_sysroot {
        sysroot.finish()?;
    }
    Ok(Staged {
        sysroot: uses_sysroot.then_some(sysroot),
        program,
    })
}

/// `build-stack.sh KIND DIR ARGS…` in a directory of its own, then
/// `remove`/`only`, then copied (links as they are) to its place. Returns
/// the names of its files: a package record lists only those.
fn build(p: &Places<'_>, s: &Stack, i: usize) -> Result<Vec<String>, String> {
    let own = p.work.join(".stacks").join(i.to_string());
    let args: Vec<&str> = s.args.iter().map(String::as_str).collect();
    build_stack(&s.kind, &own, &args);
    for e in io(fs::read_dir(&own), &own)?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let drop = s.remove.contains(&name)
            || (!s.only.is_empty() && !s.only.iter().any(|o| name.starts_with(o.as_str())));
        if drop {
            io(fs::remove_file(e.path()), &e.path())?;
        }
    }
    let dir = if s.link_only {
        p.link_dir(&s.at)
    } else {
        p.on_disk(&s.at)
    };
    io(fs::create_dir_all(&dir), &dir)?;
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", own.display()))
        .arg(&dir)
        .status();
    if !st.is_ok_and(|s| s.success()) {
        return Err(format!("copying {} to {}", own.display(), dir.display()));
    }
    names(&own)
}

/// The stack's file names, sorted.
fn names(dir: &Path) -> Result<Vec<String>, String> {
    let mut v: Vec<String> = io(fs::read_dir(dir), dir)?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    Ok(v)
}

fn records(
    p: &Places<'_>,
    s: &Stack,
    names: &[String],
    dpkg_status: &mut String,
) -> Result<(), String> {
    if let Some(pip) = &s.pip {
        pip_record(p, s, names, pip)?;
    }
    if let Some(d) = &s.dpkg {
        dpkg_record(p, s, names, d, dpkg_status)?;
    }
    if let Some(c) = &s.conda {
        conda_record(p, s, names, c)?;
    }
    if let Some(pm) = &s.pacman {
        pacman_record(p, s, names, pm)?;
    }
    Ok(())
}

/// `<site>/<dist>-<version>.dist-info/{METADATA,INSTALLER,RECORD}`; RECORD
/// lists the stack's files relative to site-packages (hashes left empty).
fn pip_record(p: &Places<'_>, s: &Stack, names: &[String], pip: &Pip) -> Result<(), String> {
    let dir = p.on_disk(&s.at);
    let site = match &pip.site {
        Some(site) => p.on_disk(site),
        None => dir
            .ancestors()
            .find(|a| a.file_name().is_some_and(|n| n == "site-packages"))
            .ok_or_else(|| format!("pip: no site-packages above {}", s.at))?
            .to_path_buf(),
    };
    let info = site.join(format!("{}-{}.dist-info", pip.dist, pip.version));
    let name = pip.dist.replace('_', "-");
    write(
        &info.join("METADATA"),
        &format!(
            "Metadata-Version: 2.1\nName: {name}\nVersion: {}\n",
            pip.version
        ),
    )?;
    write(&info.join("INSTALLER"), "pip\n")?;
    let rel = dir.strip_prefix(&site).unwrap_or(&dir);
    let mut record = String::new();
    for n in names {
        let f = dir.join(n);
        let size = fs::metadata(&f).map(|m| m.len()).unwrap_or(0);
        record += &format!("{}/{n},,{size}\n", rel.display());
    }
    let info_rel = info
        .strip_prefix(&site)
        .unwrap_or(&info)
        .display()
        .to_string();
    for f in ["METADATA", "INSTALLER", "RECORD"] {
        record += &format!("{info_rel}/{f},,\n");
    }
    write(&info.join("RECORD"), &record)
}

fn system_dir(p: &Places<'_>, s: &Stack, what: &str) -> Result<String, String> {
    if !is_system(p, &s.at) {
        return Err(format!(
            "{what} record for a stack outside the system paths: {}",
            s.at
        ));
    }
    Ok(p.expand(&s.at))
}

/// `/var/lib/dpkg/info/<package>.list` and a status stanza.
fn dpkg_record(
    p: &Places<'_>,
    s: &Stack,
    names: &[String],
    d: &Dpkg,
    status: &mut String,
) -> Result<(), String> {
    let dir = system_dir(p, s, "dpkg")?;
    let listed = d.listed_under.clone().unwrap_or(dir);
    let mut list = String::from("/.\n");
    let mut acc = String::new();
    for part in listed.trim_start_matches('/').split('/') {
        acc += "/";
        acc += part;
        list += &format!("{acc}\n");
    }
    for n in names {
        list += &format!("{listed}/{n}\n");
    }
    write(
        &p.sysroot
            .staged(&format!("/var/lib/dpkg/info/{}.list", d.package)),
        &list,
    )?;
    *status += &format!(
        "\nPackage: {}\nStatus: install ok installed\nPriority: optional\nSection: libs\n\
         Installed-Size: 1\nMaintainer: cudnn-trace test case\nArchitecture: amd64\n\
         Version: {}\nDescription: installed by a cudnn-trace test case\n",
        d.package, d.version
    );
    Ok(())
}

/// `<prefix>/conda-meta/<name>-<version>-<build>.json`.
fn conda_record(p: &Places<'_>, s: &Stack, names: &[String], c: &Conda) -> Result<(), String> {
    let dir = p.on_disk(&s.at);
    let prefix = dir
        .parent()
        .ok_or_else(|| format!("conda: {} has no parent", s.at))?;
    let files: Vec<String> = names.iter().map(|n| format!("lib/{n}")).collect();
    let doc = serde_json::json!({
        "name": c.name,
        "version": c.version,
        "build": c.build,
        "build_string": c.build,
        "channel": format!("https://conda.anaconda.org/{}", c.channel),
        "subdir": "linux-64",
        "files": files,
    });
    write(
        &prefix
            .join("conda-meta")
            .join(format!("{}-{}-{}.json", c.name, c.version, c.build)),
        &serde_json::to_string_pretty(&doc).unwrap(),
    )
}

/// `/var/lib/pacman/local/<name>-<version>/{desc,files}`.
fn pacman_record(p: &Places<'_>, s: &Stack, names: &[String], pm: &Pacman) -> Result<(), String> {
    let dir = system_dir(p, s, "pacman")?;
    let base = format!("/var/lib/pacman/local/{}-{}", pm.name, pm.version);
    write(
        &p.sysroot.staged(&format!("{base}/desc")),
        &format!(
            "%NAME%\n{}\n\n%VERSION%\n{}\n\n%ARCH%\nx86_64\n\n",
            pm.name, pm.version
        ),
    )?;
    let mut files = String::from("%FILES%\n");
    let mut acc = String::new();
    for part in dir.trim_start_matches('/').split('/') {
        acc += part;
        acc += "/";
        files += &format!("{acc}\n");
    }
    for n in names {
        files += &format!("{acc}{n}\n");
    }
    write(&p.sysroot.staged(&format!("{base}/files")), &files)
}

fn file_op(p: &Places<'_>, f: &super::spec::FileOp) -> Result<(), String> {
    let at = p.on_disk(&f.at);
    if let Some(d) = at.parent() {
        io(fs::create_dir_all(d), d)?;
    }
    if f.remove {
        if at.is_dir() {
            return io(fs::remove_dir_all(&at), &at);
        }
        return io(fs::remove_file(&at), &at);
    }
    if let Some(target) = &f.link {
        let _ = fs::remove_file(&at);
        return io(std::os::unix::fs::symlink(p.expand(target), &at), &at);
    }
    if let Some(src) = &f.copy {
        let from = p.on_disk(src);
        return io(fs::copy(&from, &at).map(|_| ()), &from);
    }
    if let Some(text) = &f.text {
        return write(&at, &p.expand(text));
    }
    if f.dir {
        return io(fs::create_dir_all(&at), &at);
    }
    Err(format!(
        "file {}: say link, copy, text, dir or remove",
        f.at
    ))
}

/// `${CC:-cc}` for a case's C source: warnings are errors here.
fn compile(
    p: &Places<'_>,
    case_dir: &Path,
    source: &str,
    out: &Path,
    link: &Link,
    mut extra: Vec<String>,
) -> Result<(), String> {
    if let Some(d) = out.parent() {
        io(fs::create_dir_all(d), d)?;
    }
    let fixtures = tools::package_dir().join("fixtures/stack");
    let common = tools::package_dir().join("cases/_common");
    for d in &link.defines {
        extra.push(format!("-D{}", p.expand(d)));
    }
    if !link.rpath.is_empty() && !link.runpath.is_empty() {
        return Err(format!(
            "{source}: one object has either DT_RPATH or DT_RUNPATH"
        ));
    }
    for (dirs, dtags) in [(&link.rpath, "disable"), (&link.runpath, "enable")] {
        if !dirs.is_empty() {
            let joined: Vec<String> = dirs.iter().map(|d| p.seen(d)).collect();
            extra.push(format!(
                "-Wl,--{dtags}-new-dtags,-rpath,{}",
                joined.join(":")
            ));
        }
    }
    if !link.needs.is_empty() {
        extra.push("-Wl,--no-as-needed".into());
    }
    for n in &link.needs {
        let (dir, soname) = n
            .rsplit_once(':')
            .ok_or_else(|| format!("needs {n:?}: want DIR:SONAME"))?;
        let link_dir = p.link_dir(dir);
        let d = if link_dir.is_dir() {
            link_dir
        } else {
            p.on_disk(dir)
        };
        extra.push(format!("-L{}", d.display()));
        extra.push(format!("-l:{soname}"));
    }
    let mut cmd = cc();
    cmd.args(["-std=gnu11", "-O2", "-Wall", "-Wextra"])
        .arg(format!("-I{}", fixtures.display()))
        .arg(format!("-I{}", common.display()))
        .arg("-o")
        .arg(out)
        .arg(case_dir.join(source))
        .args(&extra)
        // Before glibc 2.34 dlopen and pthread_* live in libdl and
        // libpthread (after, these are empty archives: nothing is added).
        .args(["-ldl", "-lpthread"]);
    run_cc(&mut cmd, &format!("{}/{source}", case_dir.display()), true);
    Ok(())
}
