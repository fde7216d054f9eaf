//! probe-rs backend: target memory through a debug probe (CMSIS-DAP, ST-Link, J-Link, ...).
//! Probes read memory while the core runs, so no halting. [`ProbeMemory`] adapts anything that
//! implements probe-rs's `MemoryInterface` — a live `Core` of a [`ProbeSession`], or in tests a
//! fake target memory — so the same code path serves both.

use probe_rs::probe::list::Lister;
use probe_rs::{MemoryInterface, Permissions, Session};

use super::{TargetMemory, TransportError};

/// A probe as the probe list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeEntry {
    /// `VID:PID[:SERIAL]`, the selector `--probe` takes.
    pub selector: String,
    pub name: String,
}

/// Probes attached to this machine.
pub fn list_probes() -> Vec<ProbeEntry> {
    Lister::new()
        .list_all()
        .into_iter()
        .map(|p| ProbeEntry {
            selector: match &p.serial_number {
                Some(s) => format!("{:04x}:{:04x}:{s}", p.vendor_id, p.product_id),
                None => format!("{:04x}:{:04x}", p.vendor_id, p.product_id),
            },
            name: p.identifier.clone(),
        })
        .collect()
}

/// Any probe-rs memory interface as a [`TargetMemory`].
pub struct ProbeMemory<M> {
    pub memory: M,
    pub name: String,
}

impl<M: MemoryInterface> TargetMemory for ProbeMemory<M> {
    fn read(&mut self, address: u64, buf: &mut [u8]) -> Result<(), TransportError> {
        self.memory
            .read(address, buf)
            .map_err(|e| TransportError::Probe(format!("{}: reading {address:#x}: {e}", self.name)))
    }
    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), TransportError> {
        self.memory
            .write(address, data)
            .map_err(|e| TransportError::Probe(format!("{}: writing {address:#x}: {e}", self.name)))
    }
    fn describe(&self) -> String {
        self.name.clone()
    }
}

/// An attached probe session on `chip`, core 0.
pub struct ProbeSession {
    session: Session,
    name: String,
}

impl ProbeSession {
    /// Opens the probe `selector` (`VID:PID[:SERIAL]`, or the only one when `None`) and attaches
    /// to `chip` (a probe-rs target name, e.g. `STM32H743ZITx`) without halting or resetting.
    pub fn attach(selector: Option<&str>, chip: &str) -> Result<ProbeSession, TransportError> {
        let lister = Lister::new();
        let probe = match selector {
            Some(s) => {
                let sel: probe_rs::probe::DebugProbeSelector = s
                    .parse()
                    .map_err(|e| TransportError::Probe(format!("probe selector {s:?}: {e}")))?;
                lister
                    .open(sel)
                    .map_err(|e| TransportError::Probe(format!("opening probe {s}: {e}")))?
            }
            None => {
                let all = lister.list_all();
                let first = match all.as_slice() {
                    [one] => one,
                    [] => return Err(TransportError::Probe("no debug probe is attached".into())),
                    _ => {
                        return Err(TransportError::Probe(format!(
                            "{} probes are attached: choose one with --probe VID:PID[:SERIAL]",
                            all.len()
                        )))
                    }
                };
                first.open().map_err(|e| {
                    TransportError::Probe(format!("opening {}: {e}", first.identifier))
                })?
            }
        };
        let session = probe
            .attach(chip, Permissions::default())
            .map_err(|e| TransportError::Probe(format!("attaching to {chip}: {e}")))?;
        Ok(ProbeSession {
            session,
            name: format!("probe-rs {chip}"),
        })
    }
}

impl ProbeSession {
    /// Core 0's memory, through the same adapter tests drive with a fake target.
    fn memory(&mut self) -> Result<ProbeMemory<probe_rs::Core<'_>>, TransportError> {
        let core = self
            .session
            .core(0)
            .map_err(|e| TransportError::Probe(format!("{}: core 0: {e}", self.name)))?;
        Ok(ProbeMemory {
            memory: core,
            name: self.name.clone(),
        })
    }
}

impl TargetMemory for ProbeSession {
    fn read(&mut self, address: u64, buf: &mut [u8]) -> Result<(), TransportError> {
        self.memory()?.read(address, buf)
    }
    fn write(&mut self, address: u64, data: &[u8]) -> Result<(), TransportError> {
        self.memory()?.write(address, data)
    }
    fn describe(&self) -> String {
        self.name.clone()
    }
}
