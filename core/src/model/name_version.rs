//! What a library's file name says about its version.
//!
//! Only the name is used (`libcudnn_graph.so.9.14.0` → 9.14.0): the trace
//! records no version numbers from inside the files.

use super::version::VersionDoc;
use serde::{Serialize, Serializer};

/// A version read from a file name. In JSON: its `kind` (`full`,
/// `major-only`, `driver`, `reported`, `asked`, `requested`, `package`,
/// `install`) and the numbers of [`VersionDoc`] (`{"kind":"full","major":9,"minor":14,"patch":0,
/// "text":"9.14.0"}`), plus for libcuda the CUDA version the driver
/// reported (`cuda`), when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameVersion {
    /// Two or more components (`9.14.0`, `13.0`).
    Full(String),
    /// A single component (`libcudnn.so.9`): the soname major only.
    MajorOnly(String),
    /// `libcuda.so.<driver version>`: the version of the NVIDIA driver.
    Driver(String),
    /// Not from the name: what the library itself reported in the process
    /// (a `version` event with `source: query`). For libcuda, the CUDA
    /// version the driver supports.
    Reported(String),
    /// Not from the name: what the file said when asked at report time, in
    /// a probe process (`analysis::files`).
    Asked(String),
    /// Not from the name: the full version in the cuDNN file names the
    /// library asked for itself (cuDNN 9 asks with its own version first).
    Requested(String),
    /// Not from the name: the version of the pip distribution that
    /// installed the file.
    Package(String),
    /// Not from the name: the version of the core library of its install
    /// that it loaded from its own directory (a cuDNN 8 dispatcher's
    /// `libcudnn_ops_infer.so.8`).
    Install(String),
}

#[derive(Serialize)]
struct NameVersionDoc {
    kind: &'static str,
    #[serde(flatten)]
    version: VersionDoc,
    #[serde(skip_serializing_if = "Option::is_none")]
    cuda: Option<VersionDoc>,
}

impl Serialize for NameVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (kind, v) = match self {
            NameVersion::Full(v) => ("full", v),
            NameVersion::MajorOnly(v) => ("major-only", v),
            NameVersion::Driver(v) => ("driver", v),
            NameVersion::Reported(v) => ("reported", v),
            NameVersion::Asked(v) => ("asked", v),
            NameVersion::Requested(v) => ("requested", v),
            NameVersion::Package(v) => ("package", v),
            NameVersion::Install(v) => ("install", v),
        };
        // `580.159.04, CUDA 13.0`: the driver and the CUDA version it supports.
        let (own, cuda) = match v.split_once(", CUDA ") {
            Some((d, c)) => (d, Some(VersionDoc::from_text(c))),
            None => (v.as_str(), None),
        };
        let mut version = VersionDoc::from_text(own);
        version.text = self.text();
        NameVersionDoc {
            kind,
            version,
            cuda,
        }
        .serialize(s)
    }
}

impl NameVersion {
    pub fn text(&self) -> String {
        match self {
            NameVersion::Full(v) => v.clone(),
            NameVersion::MajorOnly(v) => format!("{v}.x"),
            NameVersion::Driver(v) => format!("driver {v}"),
            NameVersion::Reported(v)
            | NameVersion::Asked(v)
            | NameVersion::Requested(v)
            | NameVersion::Install(v) => v.clone(),
            NameVersion::Package(v) => format!("{v} (pip)"),
        }
    }

    fn components(&self) -> usize {
        match self {
            NameVersion::Full(v)
            | NameVersion::MajorOnly(v)
            | NameVersion::Driver(v)
            | NameVersion::Reported(v)
            | NameVersion::Asked(v)
            | NameVersion::Requested(v)
            | NameVersion::Package(v)
            | NameVersion::Install(v) => v.split('.').count(),
        }
    }
}

/// The numeric dot-separated components after the last `.so.` of a file
/// name (or path), up to the first that is not a number:
/// `libcudnn_graph.so.9.14.0` gives `["9", "14", "0"]`.
pub fn so_numbers(name: &str) -> Vec<&str> {
    let base = name.rsplit('/').next().unwrap_or(name);
    let Some(i) = base.rfind(".so.") else {
        return Vec::new();
    };
    base[i + 4..]
        .split('.')
        .take_while(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
        .collect()
}

/// The version told by one file name (or path).
pub fn from_name(name: &str) -> Option<NameVersion> {
    let base = name.rsplit('/').next().unwrap_or(name);
    let parts = so_numbers(base);
    if parts.is_empty() {
        return None;
    }
    let v = parts.join(".");
    let single = !v.contains('.');
    if cudnn_trace_format::cuda_family(base.as_bytes()) == Some("cuda") {
        // libcuda.so.1 carries the driver API's ABI major, not a version.
        return (!single).then_some(NameVersion::Driver(v));
    }
    Some(if single {
        NameVersion::MajorOnly(v)
    } else {
        NameVersion::Full(v)
    })
}

/// The most precise version told by a library's path and its resolved path
/// (`libcudnn.so.9` → `libcudnn.so.9.14.0` gives 9.14.0).
pub fn of_library(path: &str, realpath: Option<&str>) -> Option<NameVersion> {
    let a = from_name(path);
    let b = realpath.and_then(from_name);
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.components() > a.components() {
            b
        } else {
            a
        }),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(name: &str) -> Option<String> {
        from_name(name).map(|v| v.text())
    }

    #[test]
    fn versions_from_names() {
        assert_eq!(v("libcudnn_graph.so.9.14.0").as_deref(), Some("9.14.0"));
        assert_eq!(v("/opt/x/libcudnn.so.9").as_deref(), Some("9.x"));
        assert_eq!(
            v("libcuda.so.580.159.04").as_deref(),
            Some("driver 580.159.04")
        );
        assert_eq!(v("/usr/lib/libcuda.so.1"), None);
        assert_eq!(v("libcudart.so.13.0.96").as_deref(), Some("13.0.96"));
        assert_eq!(v("libnvrtc-builtins.so.13.0").as_deref(), Some("13.0"));
        assert_eq!(v("libcudart-d0da41ae.so.11.0").as_deref(), Some("11.0"));
        assert_eq!(v("libcublasLt.so.12.4.5.8").as_deref(), Some("12.4.5.8"));
        assert_eq!(v("libnccl.so.2.21.5").as_deref(), Some("2.21.5"));
        // No version in the name.
        assert_eq!(v("libcudnn.so"), None);
        assert_eq!(v("libfoo.so.x"), None);
        assert_eq!(v("libfoo.so."), None);
        assert_eq!(v("noversion"), None);
        // Trailing non-numeric parts are ignored.
        assert_eq!(v("libfoo.so.1.2.debug").as_deref(), Some("1.2"));
    }

    #[test]
    fn realpath_wins_when_more_precise() {
        let t = |p, r| of_library(p, r).map(|v| v.text());
        assert_eq!(
            t("/l/libcudnn.so.9", Some("/l/libcudnn.so.9.14.0")).as_deref(),
            Some("9.14.0")
        );
        assert_eq!(
            t("/l/libcuda.so.1", Some("/l/libcuda.so.580.159.04")).as_deref(),
            Some("driver 580.159.04")
        );
        assert_eq!(
            t("/l/libcudnn.so.9", Some("/l/libcudnn.so.9")).as_deref(),
            Some("9.x")
        );
        assert_eq!(t("/l/libcudnn.so", None), None);
        assert_eq!(t("/l/libcudnn.so", Some("/store/abc")), None);
    }
}
