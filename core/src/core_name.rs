//! The Cortex-M core names users type, read by one parser: `m55`, `M55`, `cortex-m55`,
//! `Cortex_M55`, `m0+`, `m0plus`, `cortex-m0+`, `m35p`, `m4f`. Every command that takes a core
//! (`--core`, and `--target` where that was its name) reads it here first, so a spelling one
//! accepts the others accept; what each then models of that core is its own (the lowering's
//! cores, the kernels' CMSIS-NN paths, the cost model's timings).

/// Every core etscope knows by name, as its canonical key.
pub const CORE_KEYS: [&str; 10] = [
    "m0", "m0plus", "m3", "m4", "m7", "m23", "m33", "m35p", "m55", "m85",
];

/// The canonical key (`m0plus`, `m55`) of a core name as a user types it; `None` when it names
/// no Cortex-M core etscope knows.
pub fn core_key(name: &str) -> Option<&'static str> {
    let n = name.trim().to_ascii_lowercase().replace('_', "-");
    let n = n.strip_prefix("cortex-").unwrap_or(&n);
    let n = n.replace('+', "plus");
    let n = match n.as_str() {
        "m4f" => "m4",
        "m7f" => "m7",
        other => other,
    };
    CORE_KEYS.into_iter().find(|k| *k == n)
}

/// The keys as a list for messages: `m0, m0plus, m3, …`.
pub fn core_list() -> String {
    CORE_KEYS.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_every_core_reads_as_its_key() {
        for key in CORE_KEYS {
            let upper = key.to_ascii_uppercase();
            for spelling in [
                key.to_string(),
                upper.clone(),
                format!("cortex-{key}"),
                format!("Cortex-{upper}"),
                format!("cortex_{key}"),
            ] {
                assert_eq!(core_key(&spelling), Some(key), "{spelling}");
            }
        }
        assert_eq!(core_key("m0+"), Some("m0plus"));
        assert_eq!(core_key("Cortex-M0+"), Some("m0plus"));
        assert_eq!(core_key("m4f"), Some("m4"));
        assert_eq!(core_key("a53"), None);
    }
}
