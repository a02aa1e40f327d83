//! Remedies checked against the machine (issue 9, classes 1 and 2): a fix
//! for a stray copy names the package that owns it (dpkg, rpm, pacman,
//! conda-meta, pip's RECORD) or the configuration that made it findable,
//! never the system's library directory; a fix that says "load every file
//! from DIR" is given only when DIR holds every file the process needs,
//! else the finding says which file DIR lacks.
//!
//! The helpers here are shared by the rules (CDT002, CDT006, CDT010): a
//! message rule that needs a fix for a stray file calls [`stray_fix`].

use super::{entry_of, local, Entry};
use crate::analysis::findings::facts::{basename, dirname, Facts, Lib};
use crate::analysis::findings::{Context, Remedy};
use crate::model::stem;

/// The owner of `path` in words with the command that removes it:
/// "remove or upgrade the Debian package libcudnn9-cuda-12 9.23.2.1-1,
/// which owns …: sudo apt-get remove libcudnn9-cuda-12".
pub fn owner_fix(ctx: &Context<'_>, path: &str) -> Option<String> {
    owner_action(ctx, path, "remove or upgrade")
}

/// [`owner_fix`] with another verb ("remove" where no release of the
/// package would help).
pub fn owner_action(ctx: &Context<'_>, path: &str, verb: &str) -> Option<String> {
    let o = ctx.machine.file_owner(path)?;
    Some(format!(
        "{verb} {}, which installed {path} (`{}`)",
        o.words(),
        o.remove_command()
    ))
}

/// How a copy got in, and what to change so that it does not: the search
/// entry it came through (`entry`, [`super::entry_of`]), as written; for
/// the ld.so cache, the package that owns the file.
pub(super) fn how_to_avoid(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    lib: &Lib<'_>,
    entry: &Entry,
    keep_dir: Option<&str>,
) -> String {
    let l = lib.load;
    let dir = entry.dir.as_str();
    let keep = keep_dir
        .map(|k| format!(" (or put {k} before it)"))
        .unwrap_or_default();
    let who = match l.requester.as_deref() {
        Some("") => "the main program".to_string(),
        Some(r) => basename(r).to_string(),
        None => "its requester".to_string(),
    };
    match l.reason.as_str() {
        "LD_LIBRARY_PATH" => format!("remove {} from LD_LIBRARY_PATH{keep}", entry.shown()),
        // Never "remove the directory from the ld.so cache": a system
        // directory serves every program (issue 9, class 1).
        "ld.so.cache" | "default-dir" => {
            let owned = local(f, ctx).then(|| owner_fix(ctx, lib.real())).flatten();
            let fix = owned.unwrap_or_else(|| unowned_fix(ctx, lib, dir));
            format!(
                "{} came from the {} because no earlier search step had it: {fix}; or make {who} find {} first",
                basename(l.name.as_deref().unwrap_or(&l.path)),
                l.reason,
                keep_dir.unwrap_or("the copy you want")
            )
        }
        "path" => format!("{who} loads {} by its path", l.path),
        "RPATH" | "RUNPATH" | "RPATH/RUNPATH" => format!(
            "the {} of {} points at {dir}{}",
            l.reason,
            l.reason_owner.as_deref().unwrap_or(&who),
            entry
                .written
                .as_deref()
                .map(|w| format!(" (its entry {w})"))
                .unwrap_or_default()
        ),
        "pin" => format!("the cuDNN pin sent it to {dir}"),
        other => format!("found through {other} in {dir}"),
    }
}

/// What the version must be: the same major.minor (TensorFlow 1.x's
/// "compatibility version"), or the same major with at least the minor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    SameMinor,
    AtLeast,
}

/// The command that installs the version `want` asks of the package that
/// owns `path`, in its own manager's syntax: the package exists (it is
/// installed), so no package name is guessed. `have`: the version loaded,
/// to tell a downgrade.
pub fn reinstall_owner(
    ctx: &Context<'_>,
    path: &str,
    want: &crate::model::Ver,
    rule: Want,
    have: Option<&crate::model::Ver>,
) -> Option<String> {
    use crate::machine::Manager;
    let o = ctx.machine.file_owner(path)?;
    let mm = format!("{}.{}", want.major(), want.minor().unwrap_or(0));
    let down = have.is_some_and(|h| h.prefix(2) > want.prefix(2));
    let cmd = match (o.manager, rule) {
        (Manager::Dpkg, _) => format!(
            "sudo apt-get install {}'{}={mm}.*'",
            if down { "--allow-downgrades " } else { "" },
            o.name
        ),
        (Manager::Pip, Want::SameMinor) => format!("pip install '{}=={mm}.*'", o.name),
        (Manager::Pip, Want::AtLeast) => format!("pip install '{}>={mm}'", o.name),
        (Manager::Conda, r) => {
            let spec = match r {
                Want::SameMinor => format!("{}={mm}", o.name),
                Want::AtLeast => format!("{}>={mm}", o.name),
            };
            match &o.prefix {
                Some(p) => format!("conda install -p {p} '{spec}'"),
                None => format!("conda install '{spec}'"),
            }
        }
        (Manager::Rpm, _) => format!("sudo dnf install '{}-{mm}.*'", o.name),
        (Manager::Pacman, _) => return None,
    };
    Some(format!(
        "the loaded {} belongs to {}: install cuDNN {mm}{} of that package (`{cmd}`)",
        basename(path),
        o.words(),
        if rule == Want::AtLeast {
            " or newer"
        } else {
            ""
        }
    ))
}

/// For a cuDNN file of an NVIDIA Debian package whose version names its
/// CUDA flavour (`libcudnn8 8.9.4.25-1+cuda12.2`): the same cuDNN built
/// for CUDA `cuda_major`, when the support table lists that build, with
/// the toolkit its runtime is linked from (`+cuda11.8`: "static 11.8").
pub fn other_flavour(
    ctx: &Context<'_>,
    path: &str,
    cudnn: &crate::model::Ver,
    cuda_major: u32,
) -> Option<String> {
    let o = ctx.machine.file_owner(path)?;
    if o.manager != crate::machine::Manager::Dpkg {
        return None;
    }
    let (base, _) = o.version.as_deref()?.split_once("+cuda")?;
    let release = ctx.knowledge.release(cudnn)?;
    let build = release
        .build
        .iter()
        .find(|b| b.cuda.split('.').next() == Some(cuda_major.to_string().as_str()))?;
    let flavour = build
        .toolkits
        .split("static ")
        .nth(1)?
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()
        .filter(|v| v.contains('.'))?;
    Some(format!(
        "install the CUDA {cuda_major} build of the same cuDNN over {}: `sudo apt-get install --allow-downgrades {}={base}+cuda{flavour}`",
        o.words(),
        o.name
    ))
}

/// The file name a library was asked for (its soname), else its path's.
fn asked_name<'l>(lib: &'l Lib<'_>) -> &'l str {
    basename(lib.load.name.as_deref().unwrap_or(&lib.load.path))
}

/// Whether `dir` holds a file of `lib`'s stem and major (any of the names
/// cuDNN tries: `NAME.so.9.1.0`, `NAME.so.9.1`, `NAME.so.9`, `NAME.so`);
/// None when the directory cannot be listed (then nothing is claimed).
pub fn dir_has(ctx: &Context<'_>, dir: &str, lib: &Lib<'_>) -> Option<bool> {
    let files = ctx.machine.list_dir(dir);
    if files.is_empty() {
        return None;
    }
    let major = lib.major.map(|m| format!(".so.{m}"));
    let want = unhashed(&lib.stem);
    Some(files.iter().any(|f| {
        unhashed(stem(f)) == want
            && match &major {
                Some(m) => f.contains(&format!("{m}.")) || f.ends_with(m.as_str()),
                None => f.contains(".so"),
            }
    }))
}

/// A stem without the `-<8 hex digits>` that auditwheel appends to the
/// libraries it vendors (`libcudnn-74a4c495.so.9.1.0` is a `libcudnn`).
fn unhashed(stem: &str) -> &str {
    match stem.rsplit_once('-') {
        Some((s, h)) if h.len() == 8 && h.bytes().all(|b| b.is_ascii_hexdigit()) => s,
        _ => stem,
    }
}

/// Whether the cuDNN layout calls `lib`'s stem optional (loaded only when
/// its API is used; cuDNN goes on without it).
pub fn optional(ctx: &Context<'_>, lib_stem: &str, major: Option<u32>) -> bool {
    major
        .and_then(|m| ctx.knowledge.layout(m))
        .and_then(|l| l.library.iter().find(|x| x.stem == lib_stem))
        .is_some_and(|x| !x.required)
}

/// What to do about `lib`, a file that came from outside the install the
/// process meant to use (`anchor`): the fix names what made it findable
/// (its package, the LD_LIBRARY_PATH entry, the RUNPATH), never the
/// system library directory; the alternatives say whether `anchor` can
/// serve the file itself.
pub fn stray_fix(f: &Facts<'_>, ctx: &Context<'_>, lib: &Lib<'_>, anchor: Option<&str>) -> Remedy {
    let name = asked_name(lib);
    let entry = entry_of(f, ctx, lib);
    let on_disk = local(f, ctx);
    let anchor_lacks = anchor.filter(|a| on_disk && dir_has(ctx, a, lib) == Some(false));
    let why = anchor_lacks.map(|a| {
        if optional(ctx, &lib.stem, lib.major) {
            format!(
                "{a} has no {name} (an optional part that install does not ship: without the other copy cuDNN goes on without it)"
            )
        } else {
            format!("{a} has no {name} (install the full cuDNN there first)")
        }
    });
    let fix = match lib.load.reason.as_str() {
        "ld.so.cache" | "default-dir" => {
            let owned = on_disk.then(|| owner_fix(ctx, lib.real())).flatten();
            owned.unwrap_or_else(|| unowned_fix(ctx, lib, &entry.dir))
        }
        _ => how_to_avoid(f, ctx, lib, &entry, None),
    };
    let fix = match &why {
        Some(w) => format!("{w}: {fix}"),
        None => fix,
    };
    let mut r = Remedy::new(fix);
    match (anchor, anchor_lacks) {
        (Some(a), None) if lib.family == "cudnn" => {
            r = r.or(format!("pin cuDNN to {a}: cudnn-trace --pin {a}"));
        }
        (_, Some(a)) => {
            // The install that lacks it may have a release that ships it.
            if let Some(o) = anchor_owner(ctx, a) {
                r = r.or(format!(
                    "upgrade {} to a release that ships {name}",
                    o.words()
                ));
            }
        }
        _ => {}
    }
    r
}

/// The package that installed the files of `dir` (asked of any shared
/// object in it).
fn anchor_owner(ctx: &Context<'_>, dir: &str) -> Option<crate::machine::PackageOwner> {
    ctx.machine
        .list_dir(dir)
        .iter()
        .filter(|f| f.contains(".so"))
        .find_map(|f| ctx.machine.file_owner(&format!("{dir}/{f}")))
}

/// A stray file that no package database lists, found through the ld.so
/// cache or a default directory: in a system directory the file itself
/// goes (the directory holds everything else too); elsewhere the
/// directory's ld.so configuration entry does.
fn unowned_fix(ctx: &Context<'_>, lib: &Lib<'_>, dir: &str) -> String {
    if ctx.machine.is_system_dir(dir) || ctx.machine.is_system_dir(lib.dir()) {
        return format!(
            "move {} (and its links) out of {}: no package on this machine owns it, and {} serves every program",
            lib.real(),
            dirname(lib.real()),
            dirname(lib.real())
        );
    }
    format!(
        "remove {dir} from the ld.so configuration (its line in /etc/ld.so.conf or /etc/ld.so.conf.d/*.conf) and run `sudo ldconfig`, or move {} out of it",
        basename(lib.real())
    )
}

#[cfg(test)]
mod tests {
    use crate::analysis::findings::testkit::*;
    use crate::analysis::findings::Severity;
    use crate::model::elf::DynInfo;

    const WHEEL: &str = "/v/lib/python3.12/site-packages/nvidia/cudnn/lib";
    const SYS: &str = "/usr/lib/x86_64-linux-gnu";

    /// The wheel of pytorch#188892 (no tensor_ir engine) beside a system
    /// cuDNN of the Debian package libcudnn9-cuda-12, whose engine the
    /// ld.so cache serves.
    fn wheel_and_system(with_dpkg: bool) -> Trace {
        let tir = format!("{SYS}/libcudnn_engines_tensor_ir.so.9.23.2");
        Trace::new()
            .machine(|d| {
                d.file(&format!("{WHEEL}/libcudnn.so.9"))
                    .file(&format!("{WHEEL}/libcudnn_graph.so.9"))
                    .file(&tir);
                if with_dpkg {
                    d.file("/var/lib/dpkg/info/libcudnn9-cuda-12.list")
                        .file("/var/lib/dpkg/status");
                    d.texts.insert(
                        "/var/lib/dpkg/info/libcudnn9-cuda-12.list".into(),
                        format!("{SYS}\n{tir}\n"),
                    );
                    d.texts.insert(
                        "/var/lib/dpkg/status".into(),
                        "Package: libcudnn9-cuda-12\nStatus: install ok installed\nVersion: 9.23.2.1-1\n"
                            .into(),
                    );
                }
            })
            .load(&format!("{WHEEL}/libcudnn.so.9"), "RPATH", "")
            .load(
                &format!("{WHEEL}/libcudnn_graph.so.9"),
                "RUNPATH",
                &format!("{WHEEL}/libcudnn.so.9"),
            )
            .version_query(
                &format!("{WHEEL}/libcudnn_graph.so.9"),
                "cudnn",
                "9.20.0",
                Some(13000),
                None,
                None,
            )
            .load(&tir, "ld.so.cache", &format!("{WHEEL}/libcudnn_graph.so.9"))
    }

    #[test]
    fn a_stray_file_from_the_cache_names_its_package_never_the_directory() {
        let fs = wheel_and_system(true).findings();
        let f = only(&fs, "CDT002");
        assert_eq!(f.severity, Severity::Error);
        let all: Vec<&str> = f.remedies().collect();
        assert!(
            f.fix
                .contains("the Debian package libcudnn9-cuda-12 9.23.2.1-1"),
            "{all:#?}"
        );
        assert!(
            f.fix.contains("sudo apt-get remove libcudnn9-cuda-12"),
            "{all:#?}"
        );
        // The wheel lacks the file: said, and no pin to it is offered.
        assert!(
            f.fix.contains(&format!(
                "{WHEEL} has no libcudnn_engines_tensor_ir.so.9.23.2"
            )),
            "{all:#?}"
        );
        assert!(
            all.iter()
                .all(|r| !r.contains("ld.so cache") && !r.contains("--pin")),
            "{all:#?}"
        );
    }

    #[test]
    fn an_unowned_stray_file_in_a_system_directory_is_moved_not_its_directory() {
        let fs = wheel_and_system(false).findings();
        let f = only(&fs, "CDT002");
        assert!(
            f.fix
                .contains(&format!("move {SYS}/libcudnn_engines_tensor_ir.so.9.23.2")),
            "{}",
            f.fix
        );
        assert!(!f.fix.contains("from the ld.so cache"), "{}", f.fix);
    }

    #[test]
    fn an_optional_engine_cudnn_goes_on_without_is_info() {
        let graph = format!("{WHEEL}/libcudnn_graph.so.9");
        let fs = Trace::new()
            .machine(|d| {
                d.file(&format!("{WHEEL}/libcudnn.so.9")).file(&graph);
            })
            .load(&format!("{WHEEL}/libcudnn.so.9"), "RPATH", "")
            .load(&graph, "RUNPATH", &format!("{WHEEL}/libcudnn.so.9"))
            .failed(
                "libcudnn_engines_tensor_ir.so.9",
                &graph,
                &[(
                    &format!("{WHEEL}/libcudnn_engines_tensor_ir.so.9"),
                    "RUNPATH",
                    "missing",
                )],
                None,
            )
            .failed(
                "libcudnn_engines_precompiled.so.9",
                &graph,
                &[(
                    &format!("{WHEEL}/libcudnn_engines_precompiled.so.9"),
                    "RUNPATH",
                    "missing",
                )],
                None,
            )
            .findings();
        let sev = |n: &str| fs.iter().find(|f| f.title.starts_with(n)).unwrap().severity;
        assert_eq!(sev("libcudnn_engines_tensor_ir"), Severity::Info, "{fs:#?}");
        assert_eq!(
            sev("libcudnn_engines_precompiled"),
            Severity::Error,
            "{fs:#?}"
        );
    }

    #[test]
    fn a_sibling_beside_a_requester_without_runpath_is_one_finding() {
        let dir = "/opt/cudnn/lib64";
        let cnn = format!("{dir}/libcudnn_cnn_train.so.8");
        let fs = Trace::new()
            .machine(|d| {
                d.elf(&cnn, DynInfo::default())
                    .file(&format!("{dir}/libcudnn_ops_train.so.8"))
                    .file(&format!("{dir}/libcudnn_adv_train.so.8"));
            })
            .load(&cnn, "LD_LIBRARY_PATH", &format!("{dir}/libcudnn.so.8"))
            .failed(
                "libcudnn_ops_train.so.8",
                &cnn,
                &[("/usr/lib/libcudnn_ops_train.so.8", "default-dir", "missing")],
                None,
            )
            .failed(
                "libcudnn_adv_train.so.8",
                &cnn,
                &[("/usr/lib/libcudnn_adv_train.so.8", "default-dir", "missing")],
                None,
            )
            .findings();
        let f = only(&fs, "CDT006");
        assert!(
            f.title.contains("right beside it") && f.title.contains("no RUNPATH"),
            "{}",
            f.title
        );
        assert!(f.title.contains("libcudnn_adv_train.so.8"), "{}", f.title);
        assert!(
            f.fix.contains(&format!("add {dir} to LD_LIBRARY_PATH")),
            "{}",
            f.fix
        );
        assert!(f
            .alternatives
            .iter()
            .any(|a| a.contains("patchelf --set-rpath '$ORIGIN'")));
        assert!(
            f.remedies().all(|r| !r.contains("install")),
            "{:#?}",
            f.alternatives
        );
    }

    #[test]
    fn the_owner_installs_the_version_the_build_needs() {
        use super::{other_flavour, reinstall_owner, Want};
        use crate::analysis::findings::{Context, Knowledge};
        use crate::machine::{FakeDisk, Machine};
        use crate::model::Ver;
        let lib = "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.4";
        let mut d = FakeDisk::default();
        d.file(lib)
            .file("/var/lib/dpkg/info/libcudnn8.list")
            .file("/var/lib/dpkg/status");
        d.texts.insert(
            "/var/lib/dpkg/info/libcudnn8.list".into(),
            format!("{lib}\n"),
        );
        d.texts.insert(
            "/var/lib/dpkg/status".into(),
            "Package: libcudnn8\nStatus: install ok installed\nVersion: 8.9.4.25-1+cuda12.2\n"
                .into(),
        );
        let m = Machine::with_disk(d);
        let k = Knowledge::embedded().unwrap();
        let ctx = Context {
            knowledge: &k,
            machine: &m,
        };
        let v = |s| Ver::parse(s).unwrap();
        let r =
            reinstall_owner(&ctx, lib, &v("8.6.0"), Want::SameMinor, Some(&v("8.9.4"))).unwrap();
        assert!(
            r.contains("sudo apt-get install --allow-downgrades 'libcudnn8=8.6.*'"),
            "{r}"
        );
        let r = reinstall_owner(&ctx, lib, &v("8.9.7"), Want::AtLeast, Some(&v("8.9.4"))).unwrap();
        assert!(r.contains("sudo apt-get install 'libcudnn8=8.9.*'"), "{r}");
        let r = other_flavour(&ctx, lib, &v("8.9.4"), 11).unwrap();
        assert!(
            r.ends_with("`sudo apt-get install --allow-downgrades libcudnn8=8.9.4.25-1+cuda11.8`"),
            "{r}"
        );
        // No CUDA 13 build of cuDNN 8 exists: nothing is offered.
        assert_eq!(other_flavour(&ctx, lib, &v("8.9.4"), 13), None);
    }

    /// The file is there under its full-version name only (ollama's
    /// runner): the fix is the soname link, not an install.
    #[test]
    fn a_missing_soname_link_is_the_fix() {
        let dir = "/opt/runner/bin";
        let fs = Trace::new()
            .machine(|d| {
                d.file(&format!("{dir}/libcudart.so.12.0"));
            })
            .failed(
                "libcudart.so.12",
                &format!("{dir}/ollama-runner"),
                &[(&format!("{dir}/libcudart.so.12"), "RUNPATH", "missing")],
                None,
            )
            .findings();
        let f = only(&fs, "CDT006");
        assert_eq!(
            f.fix,
            format!("{dir} holds libcudart.so.12.0 but no libcudart.so.12: create the link, `ln -s libcudart.so.12.0 {dir}/libcudart.so.12`")
        );
        assert!(f
            .alternatives
            .iter()
            .any(|a| a.contains(&format!("ldconfig -n {dir}"))));
    }

    #[test]
    fn platform_subdirectories_fold_into_their_directory() {
        let name = "libcudnn.so.8";
        let mut tried: Vec<(String, &str, &str)> = Vec::new();
        for d in ["/a", "/usr/lib"] {
            for sub in [
                "glibc-hwcaps/x86-64-v3/",
                "glibc-hwcaps/x86-64-v2/",
                "tls/x86_64/",
                "",
            ] {
                tried.push((format!("{d}/{sub}{name}"), "default-dir", "missing"));
            }
        }
        let t: Vec<(&str, &str, &str)> =
            tried.iter().map(|(p, r, x)| (p.as_str(), *r, *x)).collect();
        let fs = Trace::new().failed(name, "", &t, None).findings();
        let f = only(&fs, "CDT006");
        let lines: Vec<&str> = f
            .evidence
            .iter()
            .filter(|e| e.what == "tried")
            .filter_map(|e| e.path.as_deref())
            .collect();
        assert_eq!(lines, vec!["/a/libcudnn.so.8", "/usr/lib/libcudnn.so.8"]);
        assert!(f.evidence.iter().any(|e| e
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("3 platform subdirectories"))));
    }
}
