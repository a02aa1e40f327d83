//! What the cuDNN pin did in a process image (`docs/pin.md`).

use crate::model::Image;
use serde::Serialize;
use std::path::Path;

/// What the cuDNN pin did in one process image (`docs/pin.md`).
#[derive(Debug, Serialize)]
pub struct PinView {
    pub dir: String,
    pub mode: String,
    /// Requests the pin sent into the directory.
    pub rerouted: usize,
    /// Requests refused because the directory has no such library (strict).
    pub blocked: Vec<PinRequest>,
    /// Requests left to the normal search (warn mode).
    pub unpinned: Vec<PinRequest>,
    /// cuDNN files that entered the process from outside the directory.
    pub outside: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct PinRequest {
    pub name: String,
    pub requester: Option<String>,
}

/// The pin's record for an image, or None when it was not pinned.
pub fn pin_view(img: &Image) -> Option<PinView> {
    use cudnn_trace_format::pin;
    let settings = img.header.pin.as_ref()?;
    let dir = settings.dir.clone();
    let request = |p: &crate::model::Folded<cudnn_trace_format::read::Pin>| PinRequest {
        name: p.name.clone(),
        requester: p.requester.clone(),
    };
    let of = |action: &str| -> Vec<PinRequest> {
        img.pins
            .iter()
            .filter(|p| p.action == action)
            .map(request)
            .collect()
    };
    let mut outside: Vec<String> = Vec::new();
    for l in img.loads.iter().filter(|l| l.new) {
        if cudnn_trace_format::cudnn_name(l.path.as_bytes()).is_none() {
            continue;
        }
        let real = l.realpath.as_deref().unwrap_or(&l.path);
        if !Path::new(real).starts_with(&dir) && !outside.contains(&l.path) {
            outside.push(l.path.clone());
        }
    }
    Some(PinView {
        rerouted: img
            .pins
            .iter()
            .filter(|p| p.action == pin::REROUTED)
            .count(),
        blocked: of(pin::BLOCKED),
        unpinned: of(pin::UNPINNED),
        outside,
        mode: settings.mode.clone(),
        dir,
    })
}
