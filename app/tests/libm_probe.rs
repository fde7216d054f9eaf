//! The host's model of newlib's float functions against newlib on the emulated board: the libm
//! probe (`board/libm_probe`) is built with the firmware's toolchain and flags, runs 65,536
//! inputs through every function on QEMU's Cortex-M55, and every result of a function the host
//! models must be equal bit for bit (`core/tests/libm.rs` checks a committed sample without the
//! tools).

mod tools;

use std::process::Command;

#[test]
fn every_probed_newlib_result_equals_the_hosts_model_of_it() {
    if !tools::available(
        "every_probed_newlib_result_equals_the_hosts_model_of_it",
        tools::BOARD,
    ) {
        return;
    }
    let out = std::env::temp_dir().join(format!("etscope-libm-probe-{}", std::process::id()));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../board/libm_probe/run.sh");
    let status = Command::new("bash")
        .arg(script)
        .arg(&out)
        .status()
        .expect("run the probe");
    assert!(status.success(), "{script}: {status}");
    let bytes = std::fs::read(out.join("libm_probe.bin")).expect("the probe's records");
    let _ = std::fs::remove_dir_all(&out);
    let report =
        etscope_core::kernels::libm::check_probe_records(&bytes).expect("well-formed records");
    // every probed function: 21 one-argument, powf, atan2f, fmodf and the double-precision erf
    assert!(
        report.unmodelled.is_empty(),
        "unmodelled: {:?}",
        report.unmodelled
    );
    assert_eq!(report.checked, 25 * 65_536);
    assert!(
        report.differences.is_empty(),
        "{} of {} differ, first: {:?}",
        report.differences.len(),
        report.checked,
        &report.differences[..report.differences.len().min(12)]
    );
}
