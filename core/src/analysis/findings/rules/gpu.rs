//! CDT009: the GPU's compute capability against the loaded cuDNN's support
//! range ([R15]: Kepler dropped by 8.9.5, Maxwell/Pascal/Volta
//! at 9.11, every "for CUDA 13.x" build starts at SM 7.5; above the newest SM
//! a cuDNN knows (`cudnnGetMaxDeviceVersion`) only its "hardware forward
//! compatible" graph operations run, [R16] [R3][R16]).
//!
//! Needs the program's own device-property calls (`call` events, see
//! `CallEvent::compute_capability`): without them nothing is said.

use super::{finding, loaded};
use crate::analysis::findings::facts::{Facts, Lib};
use crate::analysis::findings::{Context, Evidence, Finding, Severity, Ver};
use std::collections::BTreeMap;

/// What the calls said about one device.
#[derive(Default)]
struct Seen {
    major: Option<i64>,
    minor: Option<i64>,
    first_seq: Option<u64>,
    func: String,
}

/// Compute capabilities the program read, per device (None: unknown ordinal).
fn devices(f: &Facts<'_>) -> Vec<(Option<i64>, Ver, Evidence)> {
    // Attribute calls give major and minor separately: join them per device.
    let mut parts: BTreeMap<Option<i64>, Seen> = BTreeMap::new();
    for c in &f.calls {
        let Some((dev, ma, mi)) = c.compute_capability() else {
            continue;
        };
        let e = parts.entry(dev).or_default();
        if ma.is_some() {
            e.major = ma;
        }
        if mi.is_some() {
            e.minor = mi;
        }
        e.first_seq.get_or_insert(c.seq);
        e.func = c.func.clone();
    }
    parts
        .into_iter()
        .filter_map(|(dev, seen)| {
            let Seen {
                major: ma,
                minor: mi,
                first_seq,
                func,
            } = seen;
            let seqs = [first_seq.unwrap_or(0)];
            let ma = u32::try_from(ma?).ok()?;
            let mi = u32::try_from(mi.unwrap_or(0)).ok()?;
            let v = Ver(vec![ma, mi]);
            let ev = Evidence::new("gpu")
                .version(format!("SM {v}"))
                .seq(seqs[0])
                .detail(format!(
                    "{}the program's {func}()",
                    dev.map(|d| format!("device {d}, from "))
                        .unwrap_or_else(|| "from ".into())
                ));
            Some((dev, v, ev))
        })
        .collect()
}

/// The cuDNN copy whose version counts (graph / ops_infer, else any).
fn cudnn_ref<'l, 'a>(f: &'l Facts<'a>, ctx: &Context<'_>) -> Option<&'l Lib<'a>> {
    let mut best: Option<&Lib<'a>> = None;
    for l in f.family("cudnn") {
        let is_ref = l
            .major
            .and_then(|m| ctx.knowledge.layout(m))
            .is_some_and(|lay| lay.reference == l.stem);
        if l.version().is_none() && l.max_device().is_none() {
            continue;
        }
        if is_ref || best.is_none() {
            best = Some(l);
            if is_ref {
                break;
            }
        }
    }
    best
}

pub fn gpu_support(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<Finding> {
    let devs = devices(f);
    if devs.is_empty() {
        return Vec::new();
    }
    let Some(lib) = cudnn_ref(f, ctx) else {
        return Vec::new();
    };
    let version = lib
        .version()
        .map(|(v, _)| v)
        .or_else(|| f.cudnn_runtime_seen().map(|(v, _)| v));
    let build_major = lib.cuda_build().map(|b| b.major());
    // The lowest SM the matrix row allows for this build (the most lenient
    // of the row's builds when the CUDA build is unknown).
    let row = version.as_ref().and_then(|v| ctx.knowledge.release(v));
    let min_sm: Option<(Ver, bool)> = row.and_then(|r| {
        let builds: Vec<_> = r
            .build
            .iter()
            .filter(|b| {
                build_major.is_none_or(|m| Ver::parse(&b.cuda).is_some_and(|c| c.major() == m))
            })
            .collect();
        let per_build: Vec<Ver> = builds
            .iter()
            .filter_map(|b| {
                b.min_sm
                    .as_deref()
                    .or(r.min_sm.as_deref())
                    .and_then(Ver::parse)
            })
            .collect();
        let sm = per_build
            .into_iter()
            .min()
            .or_else(|| r.min_sm.as_deref().and_then(Ver::parse))?;
        Some((sm, r.verified))
    });
    // Every CUDA 13 build starts at SM 7.5 (CUDA 13 dropped SM < 7.5, [R39]).
    let min_sm = match (min_sm, build_major) {
        (None, Some(m)) if m >= 13 => Some((Ver(vec![7, 5]), true)),
        (x, _) => x,
    };
    let max_dev = lib.max_device().or_else(|| {
        f.calls_of("cudnnGetMaxDeviceVersion")
            .find_map(|c| c.int_value().filter(|&v| v > 0))
            .map(|v| Ver::from_sm_int(v as u64))
    });
    let vtext = version
        .as_ref()
        .map(|v| format!("cuDNN {v}"))
        .unwrap_or_else(|| "cuDNN".into());
    let build_text = lib
        .cuda_build()
        .map(|b| format!(" for CUDA {}", b.major()))
        .unwrap_or_default();
    let mut out = Vec::new();
    let too_old: Vec<&(Option<i64>, Ver, Evidence)> = devs
        .iter()
        .filter(|(_, cc, _)| min_sm.as_ref().is_some_and(|(m, _)| cc < m))
        .collect();
    if let (Some((min, verified)), false) = (&min_sm, too_old.is_empty()) {
        let ccs: Vec<String> = too_old.iter().map(|(_, c, _)| format!("SM {c}")).collect();
        let mut ev = vec![loaded(lib)];
        ev.extend(too_old.iter().map(|(_, _, e)| e.clone()));
        let row_note = if *verified {
            "support matrix"
        } else {
            "support matrix row marked UNVERIFIED (no public page states it)"
        };
        ev.push(Evidence::new("fact").detail(format!(
            "{vtext}{build_text} supports SM {min} and newer ({row_note})"
        )));
        out.push(finding(
            ctx,
            "CDT009",
            Severity::Error,
            format!("the GPU ({}) is older than {vtext}{build_text} supports (SM {min}+)", ccs.join(", ")),
            ev,
            "use a cuDNN (and framework build) that still supports this GPU: cuDNN <= 9.10.x for SM < 7.5 (and a CUDA 12 build: CUDA 13 dropped SM < 7.5), cuDNN <= 8.5 for Kepler; or run on a newer GPU".to_string(),
            &["R15n", "R15m", "R15g", "R24", "R38", "R39"],
        ));
    }
    if let Some(max) = &max_dev {
        let newer: Vec<&(Option<i64>, Ver, Evidence)> =
            devs.iter().filter(|(_, cc, _)| cc > max).collect();
        if !newer.is_empty() {
            let ccs: Vec<String> = newer.iter().map(|(_, c, _)| format!("SM {c}")).collect();
            let mut ev = vec![loaded(lib)];
            ev.extend(newer.iter().map(|(_, _, e)| e.clone()));
            ev.push(Evidence::new("fact").detail(format!(
                "cudnnGetMaxDeviceVersion() of this cuDNN: SM {max}"
            )));
            out.push(finding(
                ctx,
                "CDT009",
                Severity::Warning,
                format!("the GPU ({}) is newer than the newest SM {vtext} knows (SM {max})", ccs.join(", ")),
                ev,
                "only cuDNN 9's hardware-forward-compatible graph operations run on a GPU newer than the library knows: upgrade cuDNN to a release that lists this GPU".to_string(),
                &["R3", "R16", "R1", "E8"],
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::analysis::findings::testkit::*;
    use serde_json::json;

    const G: &str = "/v/nvidia/cudnn/lib/libcudnn_graph.so.9";

    fn base() -> Trace {
        Trace::new()
            .load(G, "RUNPATH", "/v/nvidia/cudnn/lib/libcudnn.so.9")
            .version_query(G, "cudnn", "9.19.0", Some(13000), Some(1210), Some(0))
    }

    fn props(sm: i64) -> serde_json::Value {
        json!({"ev": "call", "fn": "cudaGetDeviceProperties_v2", "lib": "/v/nvidia/cu13/lib/libcudart.so.13", "status": 0, "value": sm})
    }

    #[test]
    fn volta_with_cudnn_9_19_for_cuda_13() {
        let t = base().raw(props(700));
        let fs = t.findings();
        let f = only(&fs, "CDT009");
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(
            f.title,
            "the GPU (SM 7.0) is older than cuDNN 9.19.0 for CUDA 13 supports (SM 7.5+)"
        );
        assert!(f.evidence.iter().any(|e| e
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("UNVERIFIED"))));
    }

    /// Attribute calls (`attr` 75/76, proposed for the core reader) give
    /// major and minor separately: they are joined per device.
    #[test]
    fn attribute_calls_are_joined_per_device() {
        use crate::analysis::findings::{evaluate, Context, Facts, Knowledge};
        use crate::model::events::CallEvent;
        let t = base();
        let img = t.image();
        let k = Knowledge::embedded().unwrap();
        let mut facts = Facts::new(&img, None);
        for (attr, device, value) in [(75, 1, 6), (76, 1, 1), (75, 0, 9), (76, 0, 0)] {
            facts.calls.push(CallEvent {
                func: "cuDeviceGetAttribute".into(),
                status: Some(0),
                attr: Some(attr),
                device: Some(device),
                value: Some(json!(value)),
                ..Default::default()
            });
        }
        let machine = crate::machine::Machine::with_disk(t.machine.clone());
        let ctx = Context {
            knowledge: &k,
            machine: &machine,
        };
        let fs = evaluate(&facts, &ctx);
        let f = only(&fs, "CDT009");
        assert!(
            f.title.starts_with("the GPU (SM 6.1) is older"),
            "{}",
            f.title
        );
        assert!(f
            .evidence
            .iter()
            .any(|e| e.detail.as_deref()
                == Some("device 1, from the program's cuDeviceGetAttribute()")));
    }

    #[test]
    fn supported_gpu_is_quiet_and_newer_gpu_is_a_warning() {
        let t = base().raw(props(900));
        assert!(none(&t.findings(), "CDT009"));
        let t = base().raw(props(1300));
        let fs = t.findings();
        let f = only(&fs, "CDT009");
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(
            f.title,
            "the GPU (SM 13.0) is newer than the newest SM cuDNN 9.19.0 knows (SM 12.1)"
        );
        // No device-property call: nothing.
        assert!(none(&base().findings(), "CDT009"));
    }

    #[test]
    fn cudnn_8_9_and_kepler() {
        let t = Trace::new()
            .load(
                "/usr/lib/x86_64-linux-gnu/libcudnn_ops_infer.so.8.9.7",
                "ld.so.cache",
                "/x/libcudnn.so.8",
            )
            .raw(props(370));
        let f = only(&t.findings(), "CDT009").clone();
        assert_eq!(
            f.title,
            "the GPU (SM 3.7) is older than cuDNN 8.9.7 supports (SM 5.0+)"
        );
        // cuDNN 9.10.2 still supports Volta.
        let t = Trace::new()
            .load(
                "/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9.10.2",
                "ld.so.cache",
                "/x/libcudnn.so.9",
            )
            .raw(props(700));
        assert!(none(&t.findings(), "CDT009"));
    }
}
