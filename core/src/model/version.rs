//! Dotted version numbers and the integer encodings of CUDA and cuDNN.

use serde::{Serialize, Serializer};
#[cfg(test)]
use std::cmp::Ordering;

/// A dotted version (`9.19.0`, `13.0`, `580.159.04`), compared component by
/// component as numbers, so `580.65.06 < 580.159.04`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ver(pub Vec<u32>);

impl Serialize for Ver {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl std::fmt::Display for Ver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.0.iter().map(u32::to_string).collect();
        f.write_str(&parts.join("."))
    }
}

impl Ver {
    /// `"9.19.0"`, `" 13.0 "`; also the tuple form `"(9, 19, 0)"` and
    /// `"9, 19, 0"`. None for anything else (empty parts, letters, more than
    /// 8 components, numbers over 9 digits).
    pub fn parse(s: &str) -> Option<Ver> {
        let t = s.trim();
        let t = t
            .strip_prefix('(')
            .and_then(|x| x.strip_suffix(')'))
            .unwrap_or(t);
        let sep = if t.contains(',') { ',' } else { '.' };
        let mut v = Vec::new();
        for p in t.split(sep) {
            let p = p.trim();
            if p.is_empty() || p.len() > 9 || !p.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            v.push(p.parse().ok()?);
        }
        (!v.is_empty() && v.len() <= 8).then_some(Ver(v))
    }

    /// `CUDNN_VERSION` / `cudnnGetVersion()` (\[R1\], \[R2\]; the change of
    /// formula is in the 9.0.0 release notes \[R3\]):
    /// from 9.0 on `major*10000 + minor*100 + patch`, before that
    /// `major*1000 + minor*100 + patch`; a value >= 90000 is v9+.
    pub fn from_cudnn_int(v: u64) -> Ver {
        if v >= 90000 {
            Ver(vec![
                (v / 10000) as u32,
                (v / 100 % 100) as u32,
                (v % 100) as u32,
            ])
        } else {
            Ver(vec![
                (v / 1000) as u32,
                (v / 100 % 10) as u32,
                (v % 100) as u32,
            ])
        }
    }

    /// CUDA's `1000*major + 10*minor` (`cudaRuntimeGetVersion`,
    /// `cuDriverGetVersion`, `cudnnGetCudartVersion`; \[R7\], \[R8\], \[R4\]).
    pub fn from_cuda_int(v: u64) -> Ver {
        Ver(vec![(v / 1000) as u32, (v % 1000 / 10) as u32])
    }

    /// `cudnnGetMaxDeviceVersion()`: `SM_major*100 + SM_minor*10` (\[R4\];
    /// `CUDNN_MAX_DEVICE_VERSION` in `cudnn_version.h` \[R1\], \[E8\]).
    pub fn from_sm_int(v: u64) -> Ver {
        Ver(vec![(v / 100) as u32, (v % 100 / 10) as u32])
    }

    pub fn major(&self) -> u32 {
        self.0.first().copied().unwrap_or(0)
    }

    pub fn minor(&self) -> Option<u32> {
        self.0.get(1).copied()
    }

    /// The first `n` components.
    pub fn prefix(&self, n: usize) -> Ver {
        Ver(self.0.iter().take(n).copied().collect())
    }

    /// Compares only the components both have (`9.14` vs `9.14.0`: equal).
    #[cfg(test)]
    pub fn cmp_common(&self, other: &Ver) -> Ordering {
        let n = self.0.len().min(other.0.len());
        self.0[..n].cmp(&other.0[..n])
    }

    /// The version written the way NVIDIA writes driver versions: the third
    /// component has two digits (`580.159.04`, `535.104.05`, `470.82.01`;
    /// `418.39` stays as it is). `Display` would say `580.159.4`, a
    /// version no driver has.
    pub fn driver_text(&self) -> String {
        let parts: Vec<String> = self
            .0
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if i == 2 {
                    format!("{p:02}")
                } else {
                    p.to_string()
                }
            })
            .collect();
        parts.join(".")
    }

    /// Whether `self` lies in `from..=to`, where `to` bounds only the
    /// components it has (`9.10.2.21` is within `..=9.10.2`).
    pub fn within(&self, from: &Ver, to: &Ver) -> bool {
        self.prefix(to.0.len()) <= *to && self >= from
    }
}

/// A version as the report's JSON writes it: numbers, and the text it
/// was read from. `"9.19.0"` gives `{"major":9,"minor":19,"patch":0,
/// "text":"9.19.0"}`; a part that is not known is null (`9.x`: the
/// soname's major only); parts past the third are in `more`
/// (`9.19.0.56`); a text with no number gives all nulls. A leading
/// `driver ` is skipped, and what follows the number (`, pip
/// nvidia_cudnn_cu13`, `, CUDA 13.0`) is kept in `text` only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VersionDoc {
    pub major: Option<u32>,
    pub minor: Option<u32>,
    pub patch: Option<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub more: Vec<u32>,
    pub text: String,
}

impl VersionDoc {
    pub fn from_text(text: &str) -> VersionDoc {
        let t = text.trim();
        let t = t.strip_prefix("driver ").unwrap_or(t);
        let mut parts: Vec<u32> = Vec::new();
        for p in t.split('.') {
            let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
            match digits.parse() {
                Ok(n) if digits.len() <= 9 => parts.push(n),
                _ => break,
            }
            if digits.len() != p.len() {
                break;
            }
        }
        let mut it = parts.into_iter();
        VersionDoc {
            major: it.next(),
            minor: it.next(),
            patch: it.next(),
            more: it.collect(),
            text: text.to_string(),
        }
    }
}

/// `serialize_with` for an optional version text: [`VersionDoc`] or null.
pub fn serialize_version_text<S: Serializer>(v: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    v.as_deref().map(VersionDoc::from_text).serialize(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_as_numbers() {
        let d = |t: &str| VersionDoc::from_text(t);
        let v = d("9.19.0");
        assert_eq!((v.major, v.minor, v.patch), (Some(9), Some(19), Some(0)));
        let v = d("9.x");
        assert_eq!((v.major, v.minor, v.patch), (Some(9), None, None));
        let v = d("9.19.0.56, pip nvidia_cudnn_cu13");
        assert_eq!(
            (v.major, v.patch, v.more.clone()),
            (Some(9), Some(0), vec![56])
        );
        assert_eq!(v.text, "9.19.0.56, pip nvidia_cudnn_cu13");
        let v = d("driver 580.159.04, CUDA 13.0");
        assert_eq!((v.major, v.minor, v.patch), (Some(580), Some(159), Some(4)));
        let v = d("version unknown");
        assert_eq!((v.major, v.minor), (None, None));
        assert_eq!(
            serde_json::to_value(d("13.0")).unwrap(),
            serde_json::json!({"major": 13, "minor": 0, "patch": null, "text": "13.0"})
        );
    }

    fn v(s: &str) -> Ver {
        Ver::parse(s).unwrap()
    }

    #[test]
    fn parse_and_compare() {
        assert_eq!(v("9.19.0").0, vec![9, 19, 0]);
        assert_eq!(v("(9, 19, 0)"), v("9.19.0"));
        assert_eq!(v("580.159.04").to_string(), "580.159.4");
        assert_eq!(v("580.159.04").driver_text(), "580.159.04");
        assert_eq!(v("535.104.05").driver_text(), "535.104.05");
        assert_eq!(v("525.60.13").driver_text(), "525.60.13");
        assert_eq!(v("418.39").driver_text(), "418.39");
        assert_eq!(v("580").driver_text(), "580");
        assert!(v("580.65.06") < v("580.159.04"));
        assert!(v("580") < v("580.65.06"));
        assert!(v("579.99") < v("580"));
        for bad in ["", "9..1", "a.b", "9.1x", "1.2.3.4.5.6.7.8.9", "1234567890"] {
            assert_eq!(Ver::parse(bad), None, "{bad}");
        }
        assert_eq!(v("9.14").cmp_common(&v("9.14.0")), Ordering::Equal);
        assert!(v("9.10.2.21").within(&v("9.10.2"), &v("9.10.2")));
        assert!(!v("9.11.0").within(&v("9.10.2"), &v("9.10.2")));
        assert!(v("9.16.2").within(&v("9.11.0"), &v("9.16.99")));
    }

    #[test]
    fn integer_encodings() {
        // The v7/v8 formula [R13], [R2]; 8.9.7 and 9.28.0 as the wheels
        // report them [E3], [E8]; 9.1.0 [R1].
        assert_eq!(Ver::from_cudnn_int(7605).to_string(), "7.6.5");
        assert_eq!(Ver::from_cudnn_int(8201).to_string(), "8.2.1");
        assert_eq!(Ver::from_cudnn_int(8907).to_string(), "8.9.7");
        assert_eq!(Ver::from_cudnn_int(90100).to_string(), "9.1.0");
        assert_eq!(Ver::from_cudnn_int(92800).to_string(), "9.28.0");
        assert_eq!(Ver::from_cudnn_int(91002).to_string(), "9.10.2");
        assert_eq!(Ver::from_cudnn_int(91900).to_string(), "9.19.0");
        assert_eq!(Ver::from_cuda_int(13000).to_string(), "13.0");
        assert_eq!(Ver::from_cuda_int(12090).to_string(), "12.9");
        assert_eq!(Ver::from_cuda_int(9020).to_string(), "9.2");
        assert_eq!(Ver::from_sm_int(1210).to_string(), "12.1");
        assert_eq!(Ver::from_sm_int(900).to_string(), "9.0");
    }
}
