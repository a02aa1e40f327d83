//! The `version` and `call` events of `docs/versions-and-calls.md`, in the
//! form the rules use: converted from the typed events of
//! `cudnn_trace_format::read` (which `crate::model::trace::Image` carries), every
//! field but the identifying ones optional. The device-attribute calls'
//! `attr` and `device` feed finding CDT009 (see
//! [`CallEvent::compute_capability`]).

use crate::model::trace::Image;
use cudnn_trace_format::read::{Call, Version};
use serde::{Deserialize, Serialize};

/// `version`: what a loaded library says about itself.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct VersionEvent {
    pub seq: u64,
    pub t_ns: u64,
    pub pid: u32,
    pub tid: u32,
    /// The object's path, as in its `load` event.
    pub path: String,
    /// `cudnn`, `cudart` or `cuda`.
    pub family: Option<String>,
    /// `query` (the library's own version function), `file-name`, `elf`.
    pub source: Option<String>,
    /// `"9.19.0"`, `"13.0"`; for `cuda` the driver's CUDA version.
    pub version: Option<String>,
    /// The integer the function returned (91900, 13000).
    pub raw: Option<i64>,
    /// cuDNN: `cudnnGetCudartVersion()` (13000: built for CUDA 13.0).
    pub cuda_build: Option<i64>,
    /// cuDNN: `cudnnGetMaxDeviceVersion()` (1210: SM 12.1).
    pub max_device: Option<i64>,
    /// cuDNN sub-library: its `*VersionCheck` status (0 ok, 1002 / 14 mismatch).
    pub check: Option<i64>,
    /// `cuda`: the driver version from the file name (`580.159.04`).
    pub driver_file: Option<String>,
    /// With `check`: the core library (graph / ops_infer) it was checked against.
    pub core: Option<String>,
    /// cudart / libcuda query: the status the version function returned.
    pub status: Option<i64>,
    /// With source `query`: who called the version function, `shim` or
    /// `program` (absent in traces of shims before issue 14).
    pub asked_by: Option<String>,
}

/// `call`: one of the program's own calls to a version / init function.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct CallEvent {
    pub seq: u64,
    pub t_ns: u64,
    pub pid: u32,
    pub tid: u32,
    #[serde(rename = "fn")]
    pub func: String,
    /// Path of the object that served the call.
    pub lib: Option<String>,
    /// 1-based call number for this function and copy.
    pub n: Option<u64>,
    /// Return value of status-returning functions.
    pub status: Option<i64>,
    /// The value returned or written (a number; for device properties
    /// possibly an object, see [`CallEvent::compute_capability`]).
    pub value: Option<serde_json::Value>,
    /// `cudnnGetProperty`: 0 major, 1 minor, 2 patch.
    pub prop: Option<i64>,
    pub dur_ns: Option<u64>,
    /// `plt`, `dlsym`, `cuGetProcAddress`.
    pub via: Option<String>,
    /// Device-attribute calls: the attribute asked for
    /// (`cudaDevAttrComputeCapabilityMajor` = `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR` = 75, minor 76).
    pub attr: Option<i64>,
    /// Device calls: the device ordinal.
    pub device: Option<i64>,
}

/// `cudaDevAttrComputeCapabilityMajor` / `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR`
/// (CUDA Runtime and Driver API types, \[R7\]\[R8\]); the minor is 76.
pub const ATTR_CC_MAJOR: i64 = 75;
pub const ATTR_CC_MINOR: i64 = 76;

impl CallEvent {
    /// The value as an integer, when it is one.
    pub fn int_value(&self) -> Option<i64> {
        self.value.as_ref().and_then(|v| v.as_i64())
    }

    /// Whether the call succeeded (status 0), or returns no status.
    pub fn ok(&self) -> bool {
        self.status.unwrap_or(0) == 0
    }

    /// A compute capability this call reported, as `(device, major, minor)`;
    /// `minor` is None for a call that gave only one of the two. Accepts the
    /// forms proposed for the shim (see the report to the lead):
    /// - `cudaGetDeviceProperties[_v2]` / `cuDeviceComputeCapability` with an
    ///   integer `value` = `major*100 + minor*10` (the encoding of
    ///   `cudnnGetMaxDeviceVersion`: 700 is SM 7.0), or an object
    ///   `{"major": 8, "minor": 0}` / `{"cc": "8.0"}`;
    /// - `cudaDeviceGetAttribute` / `cuDeviceGetAttribute` with `attr` 75 or
    ///   76 and an integer `value`.
    pub fn compute_capability(&self) -> Option<(Option<i64>, Option<i64>, Option<i64>)> {
        if !self.ok() {
            return None;
        }
        match self.func.as_str() {
            "cudaGetDeviceProperties"
            | "cudaGetDeviceProperties_v2"
            | "cuDeviceComputeCapability"
            | "cuDeviceGetProperties" => {
                let v = self.value.as_ref()?;
                if let Some(n) = v.as_i64() {
                    let sm = super::Ver::from_sm_int(u64::try_from(n).ok()?);
                    return Some((
                        self.device,
                        Some(i64::from(sm.major())),
                        sm.minor().map(i64::from),
                    ));
                }
                let obj = v.as_object()?;
                let (ma, mi) = match (obj.get("major"), obj.get("minor")) {
                    (Some(a), Some(b)) => (a.as_i64(), b.as_i64()),
                    _ => {
                        let cc = obj.get("cc")?.as_str()?;
                        let (a, b) = cc.split_once('.')?;
                        (a.parse().ok(), b.parse().ok())
                    }
                };
                Some((self.device, ma, mi))
            }
            "cudaDeviceGetAttribute" | "cuDeviceGetAttribute" => match self.attr? {
                ATTR_CC_MAJOR => Some((self.device, self.int_value(), None)),
                ATTR_CC_MINOR => Some((self.device, None, self.int_value())),
                _ => None,
            },
            _ => None,
        }
    }
}

impl From<&Version> for VersionEvent {
    fn from(v: &Version) -> Self {
        VersionEvent {
            seq: v.seq,
            t_ns: v.t_ns,
            pid: v.pid,
            tid: v.tid,
            path: v.path.clone(),
            family: v.family.clone(),
            source: Some(v.source.clone()),
            version: v.version.clone(),
            raw: v.raw,
            cuda_build: v.cuda_build,
            max_device: v.max_device,
            check: v.check,
            driver_file: v.driver_file.clone(),
            core: v.core.clone(),
            status: v.status,
            asked_by: v.asked_by.clone(),
        }
    }
}

impl From<&Call> for CallEvent {
    fn from(c: &Call) -> Self {
        CallEvent {
            seq: c.seq,
            t_ns: c.t_ns,
            pid: c.pid,
            tid: c.tid,
            func: c.function.clone(),
            lib: Some(c.lib.clone()),
            n: Some(c.n),
            status: c.status,
            value: c.value.map(serde_json::Value::from),
            prop: c.prop,
            dur_ns: c.dur_ns,
            via: Some(c.via.clone()),
            attr: c.attr,
            device: c.device,
        }
    }
}

/// The version and call events of an image, converted.
pub fn of_image(img: &Image) -> (Vec<VersionEvent>, Vec<CallEvent>) {
    (
        img.versions.iter().map(VersionEvent::from).collect(),
        img.calls.iter().map(CallEvent::from).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converted_from_the_core_reader() {
        use cudnn_trace_format::read::{parse_line, Event};
        let v = r#"{"ev":"version","seq":5,"t_ns":5,"pid":1,"ppid":0,"tid":1,"path":"/p/libcudnn_graph.so.9","family":"cudnn","source":"query","version":"9.19.0","raw":91900,"cuda_build":13000,"max_device":1210,"check":null,"core":null,"status":null,"driver_file":null}"#;
        let Ok(Event::Version(v)) = parse_line(v) else {
            panic!("not a version event")
        };
        let e = VersionEvent::from(&v);
        assert_eq!(
            (e.cuda_build, e.source.as_deref()),
            (Some(13000), Some("query"))
        );
        let c = r#"{"ev":"call","seq":4,"t_ns":5,"pid":1,"ppid":0,"tid":1,"fn":"cudnnCreate","lib":"/p/libcudnn.so.9","n":1,"via":"plt","status":1001,"value":null,"prop":null,"dur_ns":7}"#;
        let Ok(Event::Call(c)) = parse_line(c) else {
            panic!("not a call event")
        };
        let e = CallEvent::from(&c);
        assert_eq!(
            (e.func.as_str(), e.status, e.ok()),
            ("cudnnCreate", Some(1001), false)
        );
        assert_eq!(e.lib.as_deref(), Some("/p/libcudnn.so.9"));
        // A device-attribute call keeps its attribute and device (CDT009
        // reads the compute capability from them).
        let c = r#"{"ev":"call","seq":6,"t_ns":5,"pid":1,"ppid":0,"tid":1,"fn":"cudaDeviceGetAttribute","lib":"/p/libcudart.so.13","n":1,"via":"plt","status":0,"value":7,"prop":null,"dur_ns":null,"attr":75,"device":0}"#;
        let Ok(Event::Call(c)) = parse_line(c) else {
            panic!("not a call event")
        };
        let e = CallEvent::from(&c);
        assert_eq!((e.attr, e.device), (Some(75), Some(0)));
        assert_eq!(e.compute_capability(), Some((Some(0), Some(7), None)));
    }

    #[test]
    fn compute_capability_forms() {
        let c = |s: &str| {
            serde_json::from_str::<CallEvent>(s)
                .unwrap()
                .compute_capability()
        };
        assert_eq!(
            c(r#"{"fn":"cudaGetDeviceProperties_v2","status":0,"value":750}"#),
            Some((None, Some(7), Some(5)))
        );
        assert_eq!(
            c(
                r#"{"fn":"cudaGetDeviceProperties_v2","status":0,"device":0,"value":{"major":7,"minor":0}}"#
            ),
            Some((Some(0), Some(7), Some(0)))
        );
        assert_eq!(
            c(r#"{"fn":"cuDeviceComputeCapability","status":0,"value":{"cc":"6.1"}}"#),
            Some((None, Some(6), Some(1)))
        );
        assert_eq!(
            c(r#"{"fn":"cuDeviceGetAttribute","status":0,"attr":75,"device":1,"value":9}"#),
            Some((Some(1), Some(9), None))
        );
        assert_eq!(
            c(r#"{"fn":"cudaDeviceGetAttribute","status":0,"attr":76,"value":0}"#),
            Some((None, None, Some(0)))
        );
        assert_eq!(
            c(r#"{"fn":"cudaDeviceGetAttribute","status":0,"attr":16,"value":132}"#),
            None
        );
        assert_eq!(
            c(r#"{"fn":"cudaGetDeviceProperties","status":100,"value":700}"#),
            None
        );
        assert_eq!(c(r#"{"fn":"cudnnCreate","status":0}"#), None);
    }
}
