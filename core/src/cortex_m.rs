//! The Cortex-M core, modelled once: every command and room that takes a core (`--core`, the
//! lowering's target, the kernels' CMSIS-NN path, the cost model's timings, the window's
//! pickers) names it with this [`Core`], read by one parser from any spelling users type (`m55`,
//! `M55`, `cortex-m55`, `Cortex_M55`, `m0+`, `m0plus`, `m35p`, `m4f`). What a room knows of a
//! core is an `impl Core` in that room (the cost model's cycle timings in
//! `analysis/cost/cores.rs`, the kernels' device arithmetic of its CMSIS-NN path in
//! `kernels/device.rs`); what every room shares is here: the CMSIS-NN path it takes ([`Isa`],
//! as ExecuTorch's `CortexMTargetConfig` resolves it), whether it has an FPU, a typical clock.

/// A Cortex-M core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Core {
    M0,
    M0Plus,
    M3,
    M4,
    M7,
    M23,
    M33,
    M35P,
    M55,
    M85,
}

/// The CMSIS-NN code path a core takes (`cmsis_nn.Backend` in ExecuTorch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Isa {
    /// Helium (M55, M85).
    Mve,
    /// The DSP extension, no Helium (M4, M7, M33, M35P).
    Dsp,
    /// Plain C: neither (M0, M0+, M3, M23).
    Plain,
}

impl Isa {
    pub fn name(self) -> &'static str {
        match self {
            Isa::Mve => "Helium (MVE)",
            Isa::Dsp => "DSP",
            Isa::Plain => "plain C",
        }
    }
}

impl Core {
    /// Every core, in the order lists show them (Helium first, then DSP, then plain C).
    pub const ALL: [Core; 10] = [
        Core::M55,
        Core::M85,
        Core::M4,
        Core::M7,
        Core::M33,
        Core::M35P,
        Core::M0,
        Core::M0Plus,
        Core::M3,
        Core::M23,
    ];

    /// The core a user names, in any spelling; `None` when it names no Cortex-M core etscope
    /// knows.
    pub fn parse(name: &str) -> Option<Core> {
        let n = name.trim().to_ascii_lowercase().replace('_', "-");
        let n = n.strip_prefix("cortex-").unwrap_or(&n);
        let n = n.replace('+', "plus");
        let n = match n.as_str() {
            "m4f" => "m4",
            "m7f" => "m7",
            other => other,
        };
        Core::ALL.into_iter().find(|c| c.key() == n)
    }

    /// [`Core::parse`], or a message naming `name` and the cores there are.
    pub fn parse_or_list(name: &str) -> Result<Core, String> {
        Core::parse(name).ok_or_else(|| format!("unknown core {name:?}: one of {}", Core::list()))
    }

    /// The canonical key (`m0plus`, `m55`), as `--core` takes it and JSON writes it.
    pub fn key(self) -> &'static str {
        match self {
            Core::M0 => "m0",
            Core::M0Plus => "m0plus",
            Core::M3 => "m3",
            Core::M4 => "m4",
            Core::M7 => "m7",
            Core::M23 => "m23",
            Core::M33 => "m33",
            Core::M35P => "m35p",
            Core::M55 => "m55",
            Core::M85 => "m85",
        }
    }

    /// As a person reads it (`Cortex-M0+`).
    pub fn name(self) -> &'static str {
        match self {
            Core::M0 => "Cortex-M0",
            Core::M0Plus => "Cortex-M0+",
            Core::M3 => "Cortex-M3",
            Core::M4 => "Cortex-M4",
            Core::M7 => "Cortex-M7",
            Core::M23 => "Cortex-M23",
            Core::M33 => "Cortex-M33",
            Core::M35P => "Cortex-M35P",
            Core::M55 => "Cortex-M55",
            Core::M85 => "Cortex-M85",
        }
    }

    /// The keys as a list for messages: `m55, m85, m4, …`.
    pub fn list() -> String {
        Core::ALL.map(Core::key).join(", ")
    }

    /// The CMSIS-NN path the core takes, as ExecuTorch's `CortexMTargetConfig` resolves it.
    pub fn isa(self) -> Isa {
        match self {
            Core::M55 | Core::M85 => Isa::Mve,
            Core::M4 | Core::M7 | Core::M33 | Core::M35P => Isa::Dsp,
            Core::M0 | Core::M0Plus | Core::M3 | Core::M23 => Isa::Plain,
        }
    }

    /// Whether the usual parts with this core have a single-precision FPU (M4F, M7, M33, M35P,
    /// M55, M85; not the M0, M0+, M3, M23).
    pub fn has_fpu(self) -> bool {
        self.isa() != Isa::Plain
    }

    /// A clock parts with this core commonly run at, in MHz (the default when none is given).
    pub fn typical_mhz(self) -> f64 {
        match self {
            Core::M0 | Core::M0Plus => 64.0,
            Core::M3 => 72.0,
            Core::M23 => 64.0,
            Core::M4 => 120.0,
            Core::M7 => 280.0,
            Core::M33 | Core::M35P => 128.0,
            Core::M55 => 400.0,
            Core::M85 => 480.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_every_core_reads_as_that_core() {
        for core in Core::ALL {
            let key = core.key();
            let upper = key.to_ascii_uppercase();
            for spelling in [
                key.to_string(),
                upper.clone(),
                format!("cortex-{key}"),
                format!("Cortex-{upper}"),
                format!("cortex_{key}"),
            ] {
                assert_eq!(Core::parse(&spelling), Some(core), "{spelling}");
            }
        }
        assert_eq!(Core::parse("m0+"), Some(Core::M0Plus));
        assert_eq!(Core::parse("Cortex-M0+"), Some(Core::M0Plus));
        assert_eq!(Core::parse("m4f"), Some(Core::M4));
        assert_eq!(Core::parse("a53"), None);
    }

    #[test]
    fn every_core_takes_the_cmsis_nn_path_executorch_gives_it() {
        // ExecuTorch 1.5.1 `target_config.py`: M55/M85 → MVE, M4/M7/M33 → DSP, M0/M3 → plain C
        let path = |c: Core| c.isa();
        assert_eq!(path(Core::M55), Isa::Mve);
        assert_eq!(path(Core::M85), Isa::Mve);
        for c in [Core::M4, Core::M7, Core::M33, Core::M35P] {
            assert_eq!(path(c), Isa::Dsp, "{c:?}");
        }
        for c in [Core::M0, Core::M0Plus, Core::M3, Core::M23] {
            assert_eq!(path(c), Isa::Plain, "{c:?}");
            assert!(!c.has_fpu());
        }
    }
}
