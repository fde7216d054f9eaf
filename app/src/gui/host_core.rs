//! Which core and CMSIS-NN version the window's host runs model (the CLI's `--target` and
//! `--cmsis-nn`, `--libm`): used by Diff's host runs and the inspector's device notes.

use eframe::egui;
use etscope_core::formats::pte::Program;
use etscope_core::kernels::libm::Libm;
use etscope_core::runtime::{CmsisNn, Device, Target};

/// The user's choice; `target: None` is each program's own core.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostChoice {
    pub target: Option<Target>,
    pub cmsis_nn: CmsisNn,
    pub libm: Libm,
}

const TARGETS: [Option<Target>; 4] = [
    None,
    Some(Target::CortexM55),
    Some(Target::CortexMDsp),
    Some(Target::CortexMBase),
];

const VERSIONS: [(CmsisNn, &str); 2] = [
    (CmsisNn::Dbf45dbf, "dbf45dbf (ExecuTorch 1.5.1)"),
    (CmsisNn::Fixed4a8f5b5d, "4a8f5b5d (transpose conv fixed)"),
];

impl HostChoice {
    /// The device a host run of `program` models.
    pub fn device_for(&self, program: &Program) -> Device {
        self.device_with_own(Target::of_program(program, program.default_plan_index()))
    }

    /// The device a host run models of a program lowered for `own` (where it says one).
    pub fn device_with_own(&self, own: Option<Target>) -> Device {
        Device {
            target: self.target.or(own).unwrap_or_default(),
            cmsis_nn: self.cmsis_nn,
            libm: self.libm,
        }
    }

    /// Two combo boxes: the core (naming what "the program's own" is, `own`, for a document
    /// with a program) and the CMSIS-NN version.
    pub fn ui(&mut self, ui: &mut egui::Ui, own: Option<Option<Target>>) {
        ui.label("host runs as");
        let own = own.map(|o| o.unwrap_or_default().name());
        let label = |t: Option<Target>| match (t, own) {
            (Some(t), _) => t.name().to_string(),
            (None, Some(o)) => format!("the program's own core: {o}"),
            (None, None) => "the program's own core".to_string(),
        };
        egui::ComboBox::from_id_salt("host-core")
            .selected_text(label(self.target))
            .show_ui(ui, |ui| {
                for t in TARGETS {
                    ui.selectable_value(&mut self.target, t, label(t));
                }
            })
            .response
            .on_hover_text("the core whose CMSIS-NN path the host's Cortex-M kernels model");
        ui.label("CMSIS-NN");
        let version = VERSIONS
            .iter()
            .find(|(v, _)| *v == self.cmsis_nn)
            .map(|(_, n)| *n)
            .unwrap_or("?");
        egui::ComboBox::from_id_salt("host-cmsis-nn")
            .selected_text(version)
            .show_ui(ui, |ui| {
                for (v, name) in VERSIONS {
                    ui.selectable_value(&mut self.cmsis_nn, v, name);
                }
            });
    }

    /// The C library picker (a row of its own: the core and CMSIS-NN pickers fill one).
    pub fn libm_ui(&mut self, ui: &mut egui::Ui) {
        ui.label("C library");
        egui::ComboBox::from_id_salt("host-libm")
            .selected_text(self.libm.name())
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut self.libm, Libm::Newlib, "newlib (the device)");
                ui.selectable_value(
                    &mut self.libm,
                    Libm::Glibc,
                    "glibc (ExecuTorch's x86 runtime)",
                );
            })
            .response
            .on_hover_text("whose expf, tanhf, powf, ... the host's float kernels compute");
    }
}
