//! Where a delegate's work runs when its program is on a Cortex-M part.
//!
//! A delegate is a compiled blob its backend runs. Beside a Cortex-M, ExecuTorch's backends for
//! microcontroller NPUs run it on the NPU (Arm's `EthosUBackend`, NXP's `NeutronBackend`):
//! etscope does not price that work. The backends built for application processors, GPUs and
//! phone NPUs (XNNPACK, Vulkan, Core ML, MPS, Qualcomm's QNN, MediaTek, OpenVINO, Arm's VGF) have
//! no bare-metal Cortex-M build in ExecuTorch (Samsung's `EnnBackend` too), so a program that
//! delegates to one does not run
//! on a Cortex-M part at all. A backend etscope does not know is left unpriced and said so.

/// Where a delegate of `backend` (its id in the program) runs beside a Cortex-M core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelegateHost {
    /// An NPU beside the core: the core hands the work over; etscope does not price it.
    Npu,
    /// No Cortex-M build of the backend exists: the program does not run on the part.
    NotOnCortexM,
    /// A backend etscope does not know.
    Unknown,
}

/// The backends with an NPU beside a Cortex-M core.
const NPU_BACKENDS: &[&str] = &["EthosUBackend", "NeutronBackend"];

/// The backends built for application processors, GPUs and phone NPUs only.
const HOST_BACKENDS: &[&str] = &[
    "XnnpackBackend",
    "VulkanBackend",
    "CoreMLBackend",
    "MPSBackend",
    "QnnBackend",
    "NeuropilotBackend",
    "OpenvinoBackend",
    "VgfBackend",
    "EnnBackend",
];

/// Where `backend`'s work runs.
pub fn host(backend: &str) -> DelegateHost {
    if NPU_BACKENDS.contains(&backend) {
        DelegateHost::Npu
    } else if HOST_BACKENDS.contains(&backend) {
        DelegateHost::NotOnCortexM
    } else {
        DelegateHost::Unknown
    }
}

/// Why a delegate call is not priced, in a row's note.
pub fn unpriced_why(backend: &str) -> String {
    match host(backend) {
        DelegateHost::Npu => format!(
            "{backend}'s work runs on the NPU beside the core (for Ethos-U, Vela's performance estimate prices it); etscope does not model it"
        ),
        DelegateHost::NotOnCortexM => not_on_cortex_m(backend),
        DelegateHost::Unknown => format!(
            "etscope does not know where {backend}'s work runs; it is not priced"
        ),
    }
}

/// Why a program delegating to `backend` does not run on a Cortex-M part.
pub fn not_on_cortex_m(backend: &str) -> String {
    format!(
        "the program delegates to {backend}, and ExecuTorch has no bare-metal Cortex-M build of that backend (it targets application processors, GPUs or phone NPUs)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npu_backends_run_beside_the_core_and_host_backends_do_not_run_on_it() {
        assert_eq!(host("EthosUBackend"), DelegateHost::Npu);
        assert_eq!(host("XnnpackBackend"), DelegateHost::NotOnCortexM);
        assert_eq!(host("MyVendorBackend"), DelegateHost::Unknown);
        assert!(unpriced_why("MyVendorBackend").contains("does not know"));
    }
}
