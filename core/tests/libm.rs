//! etscope's model of newlib's float functions against newlib itself: every record the libm probe
//! wrote on the emulated board (`board/libm_probe`; a sample of its output is committed as
//! `tests/fixtures/libm/newlib_probe.bin`, the whole run is checked by `app/tests/libm_probe.rs`)
//! is recomputed on the host and must be equal bit for bit; a function the host does not model
//! is refused by name.

use etscope_core::kernels::libm::{check_probe_records, Libm};

#[test]
fn newlibs_float_functions_are_computed_bit_for_bit_as_on_the_board() {
    let path = std::env::var("ETSCOPE_LIBM_PROBE").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/libm/newlib_probe.bin"
        )
        .to_string()
    });
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let report = check_probe_records(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert!(
        report.checked > 0,
        "{path}: no record of a modelled function"
    );
    assert!(
        report.differences.is_empty(),
        "{path}: {} of {} differ, first: {:?}",
        report.differences.len(),
        report.checked,
        &report.differences[..report.differences.len().min(12)]
    );
    assert!(
        report.unmodelled.is_empty(),
        "{path}: the host refuses {:?}",
        report.unmodelled
    );
}

#[test]
fn a_function_newlib_computes_and_the_host_does_not_model_is_refused_naming_it() {
    use etscope_core::kernels::libm::Function;
    // the double-precision trigonometry (a float64 tensor's `sin`) is not modelled
    let refused = Libm::Newlib.f64(Function::Sin, 0.5).unwrap_err();
    assert_eq!(refused.function, "sin");
    assert!(refused.to_string().contains("--libm glibc"), "{refused}");
    assert!(Libm::Glibc.f64(Function::Sin, 0.5).is_ok());
}
