//! Which installed Python distribution a file belongs to, from the
//! metadata pip leaves in `site-packages`: each `NAME-VERSION.dist-info`
//! directory has a `RECORD` listing every file it installed, with its size
//! (PEP 376, PEP 627). That tells the version of a file that says nothing
//! itself: a pip cuDNN wheel's `libcudnn_engines_precompiled.so.9`, or
//! CuPy's `cupy_backends/cuda/api/runtime….so`, whose static CUDA runtime
//! the distribution's name gives (`cupy-cuda13x`).
//!
//! Only distributions whose name starts like the file's top-level
//! directory are read (`nvidia/…` → `nvidia_*`, `cupy_backends/…` →
//! `cupy*`), each `RECORD` once, at most [`MAX_RECORD_BYTES`] of it.

use super::Machine;
use crate::model::basename;

/// Most bytes read of one `RECORD`.
pub const MAX_RECORD_BYTES: usize = 16 << 20;
/// Most distributions looked at for one file.
const MAX_CANDIDATES: usize = 64;

/// The distribution that installed a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The `*.dist-info` directory's name without the suffix
    /// (`cupy_cuda13x-13.6.0`).
    pub dist: String,
    /// The distribution's name as pip writes it (`cupy_cuda13x`).
    pub name: String,
    pub version: String,
    /// The file's size as `RECORD` lists it, when it does.
    pub size: Option<u64>,
}

impl Owner {
    /// The CUDA version the distribution's name says it is built for:
    /// `cupy_cuda13x` → "13.x", `cupy_cuda117` → "11.7",
    /// `nvidia_cudnn_cu12` → "12.x"; None when the name says nothing.
    pub fn cuda(&self) -> Option<String> {
        let n = self.name.to_ascii_lowercase().replace('-', "_");
        for part in n.split('_') {
            let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
            if let Some(rest) = part
                .strip_prefix("cuda")
                .or_else(|| part.strip_prefix("cu"))
            {
                if let Some(m) = rest.strip_suffix('x').filter(|m| digits(m)) {
                    return Some(format!("{m}.x"));
                }
                if digits(rest) && rest.len() == 3 {
                    return Some(format!("{}.{}", &rest[..2], &rest[2..]));
                }
                if digits(rest) && rest.len() <= 2 {
                    return Some(format!("{rest}.x"));
                }
            }
        }
        None
    }
}

/// `(site-packages directory, path inside it)` of a file installed there.
fn split_site(path: &str) -> Option<(&str, &str)> {
    ["/site-packages/", "/dist-packages/"].iter().find_map(|m| {
        let i = path.rfind(m)?;
        Some((&path[..i + m.len() - 1], &path[i + m.len()..]))
    })
}

/// A distribution name as pip compares them (PEP 503, lower case, `-` and
/// `.` as `_`).
fn normalize(s: &str) -> String {
    s.to_ascii_lowercase().replace(['-', '.'], "_")
}

/// The distribution that installed `path` (a file under a
/// `site-packages`), from the `RECORD` that lists it.
pub fn owner(m: &Machine, path: &str) -> Option<Owner> {
    let (site, rel) = split_site(path)?;
    let top = normalize(rel.split('/').next()?);
    let prefix = top.split('_').next().filter(|p| !p.is_empty())?.to_string();
    let mut dists: Vec<String> = m
        .list_dir(site)
        .into_iter()
        .filter(|e| e.ends_with(".dist-info") && normalize(e).starts_with(&prefix))
        .collect();
    dists.sort();
    for d in dists.into_iter().take(MAX_CANDIDATES) {
        let record = m.read_text(&format!("{site}/{d}/RECORD"), MAX_RECORD_BYTES);
        let Some(size) = record.as_deref().and_then(|r| listed(r, rel)) else {
            continue;
        };
        let dist = d.trim_end_matches(".dist-info").to_string();
        let (name, version) = dist.split_once('-')?;
        return Some(Owner {
            name: name.to_string(),
            version: version.to_string(),
            dist: dist.clone(),
            size,
        });
    }
    None
}

/// Whether `RECORD` text lists `rel`: Some(its size, when given).
fn listed(record: &str, rel: &str) -> Option<Option<u64>> {
    record.lines().find_map(|line| {
        let mut f = line.rsplitn(3, ',');
        let size = f.next()?;
        let _hash = f.next()?;
        let file = f.next()?;
        let file = file.trim_matches('"');
        (file == rel || (basename(file) == basename(rel) && file.ends_with(rel)))
            .then(|| size.trim().parse().ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::FakeDisk;

    #[test]
    fn the_record_that_lists_a_file_names_its_distribution() {
        let sp = "/v/lib/python3.12/site-packages";
        let mut d = FakeDisk::default();
        d.dir(&format!("{sp}/cupy_cuda13x-13.6.0.dist-info"))
            .dir(&format!("{sp}/cupyx_other-1.0.dist-info"))
            .dir(&format!("{sp}/numpy-2.1.0.dist-info"));
        d.texts.insert(
            format!("{sp}/cupy_cuda13x-13.6.0.dist-info/RECORD"),
            "cupy/__init__.py,sha256=abc,100\ncupy_backends/cuda/api/runtime.cpython-312-x86_64-linux-gnu.so,sha256=def,4567\n".into(),
        );
        let m = Machine::with_disk(d);
        let o = owner(
            &m,
            &format!("{sp}/cupy_backends/cuda/api/runtime.cpython-312-x86_64-linux-gnu.so"),
        )
        .unwrap();
        assert_eq!(
            (o.name.as_str(), o.version.as_str(), o.size),
            ("cupy_cuda13x", "13.6.0", Some(4567))
        );
        assert_eq!(o.cuda().as_deref(), Some("13.x"));
        assert_eq!(owner(&m, &format!("{sp}/cupy_backends/other.so")), None);
        assert_eq!(owner(&m, "/usr/lib/libcudart.so.13"), None);
    }

    #[test]
    fn cuda_from_names() {
        let o = |n: &str| Owner {
            dist: String::new(),
            name: n.into(),
            version: "1".into(),
            size: None,
        };
        assert_eq!(o("cupy_cuda12x").cuda().as_deref(), Some("12.x"));
        assert_eq!(o("cupy_cuda117").cuda().as_deref(), Some("11.7"));
        assert_eq!(o("nvidia_cudnn_cu13").cuda().as_deref(), Some("13.x"));
        assert_eq!(o("cupy").cuda(), None);
        assert_eq!(o("nvidia_cuda_runtime").cuda(), None);
        assert_eq!(o("cudnn_tools").cuda(), None);
    }
}
