//! Bad input for every reader: truncated, bit-flipped and wrong-kind files give errors, never
//! panics; hostile sizes are refused before anything is allocated.

mod common;

use etscope_core::formats::bundled::BundledProgram;
use etscope_core::formats::debug_buffer::captured_tensors;
use etscope_core::formats::etdump::ETDump;
use etscope_core::formats::etrecord::ETRecord;
use etscope_core::formats::npy::read_npy;
use etscope_core::formats::pte::Program;
use etscope_core::Error;

fn pte() -> Vec<u8> {
    common::read(&common::tiny().join("model_fp32.pte"))
}
fn etdp() -> Vec<u8> {
    common::read(&common::tiny().join("etdump.etdp"))
}
fn bpte() -> Vec<u8> {
    common::read(&common::tiny().join("model_fp32.bpte"))
}
fn etrecord() -> Vec<u8> {
    common::read(&common::tiny().join("model_fp32.etrecord"))
}
fn npy() -> Vec<u8> {
    common::read(&common::tiny().join("input.npy"))
}

/// Every reader applied to `bytes`; each returns whether it accepted them.
fn all_readers(bytes: &[u8]) -> [bool; 5] {
    [
        Program::parse(bytes.to_vec()).is_ok(),
        ETDump::parse(bytes).is_ok(),
        BundledProgram::parse(bytes).is_ok(),
        ETRecord::parse(bytes).is_ok(),
        read_npy(bytes).is_ok(),
    ]
}

fn truncations(len: usize) -> impl Iterator<Item = usize> {
    let step = (len / 97).max(1);
    (0..len).step_by(step).chain([len.saturating_sub(1)])
}

#[test]
fn truncated_files_are_errors() {
    type Accepts = fn(&[u8]) -> bool;
    let cases: [(&str, Vec<u8>, Accepts); 5] = [
        ("pte", pte(), |b| Program::parse(b.to_vec()).is_ok()),
        ("etdump", etdp(), |b| ETDump::parse(b).is_ok()),
        ("bpte", bpte(), |b| BundledProgram::parse(b).is_ok()),
        ("etrecord", etrecord(), |b| ETRecord::parse(b).is_ok()),
        ("npy", npy(), |b| read_npy(b).is_ok()),
    ];
    for (name, bytes, parse) in cases {
        assert!(parse(&bytes), "{name}: the untouched file parses");
        for n in truncations(bytes.len()) {
            assert!(
                !parse(&bytes[..n]),
                "{name} truncated to {n} of {} bytes was accepted",
                bytes.len()
            );
        }
    }
}

#[test]
fn truncation_errors_say_what_is_missing() {
    let bytes = pte();
    let err = Program::parse(bytes[..bytes.len() / 2].to_vec()).expect_err("half a pte");
    assert!(
        matches!(err, Error::Truncated { .. } | Error::Corrupt { .. }),
        "{err}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("truncated") || msg.contains("corrupt"),
        "{msg}"
    );
    let e = ETDump::parse(&etdp()[..100])
        .expect_err("short etdump")
        .to_string();
    assert!(e.contains("size prefix"), "{e}");
}

#[test]
fn bit_flips_never_panic() {
    for bytes in [pte(), etdp(), bpte(), npy()] {
        let step = (bytes.len() / 1500).max(1);
        for i in (0..bytes.len()).step_by(step) {
            for mask in [0x01u8, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[i] ^= mask;
                let _ = all_readers(&b);
            }
        }
    }
    // the etrecord's zip directory and JSON entries
    let rec = etrecord();
    let step = (rec.len() / 400).max(1);
    for i in (0..rec.len()).step_by(step) {
        let mut b = rec.clone();
        b[i] ^= 0x5a;
        let _ = ETRecord::parse(&b);
    }
}

#[test]
fn wrong_kind_files_are_refused_with_the_expected_identifier() {
    let e = Program::parse(etdp()).expect_err("etdump as pte");
    assert!(matches!(e, Error::WrongIdentifier { .. }), "{e}");
    assert!(e.to_string().contains("ET12"), "{e}");
    assert!(matches!(
        ETDump::parse(&pte()),
        Err(Error::WrongIdentifier { .. })
    ));
    assert!(matches!(
        BundledProgram::parse(&pte()),
        Err(Error::WrongIdentifier { .. })
    ));
    assert!(Program::parse(bpte()).is_err());
    assert!(ETRecord::parse(&pte()).is_err());
    assert!(read_npy(&pte()).is_err());
    // A zip that is not an ETRecord: the torch.save archive stored inside one.
    let inner = {
        let rec = etrecord();
        let start = rec
            .windows(4)
            .skip(4)
            .position(|w| w == b"PK\x03\x04")
            .map(|p| p + 4)
            .expect("a nested zip");
        rec[start..].to_vec()
    };
    assert!(ETRecord::parse(&inner).is_err());
    assert_eq!(all_readers(&[]), [false; 5]);
}

fn replace(bytes: &mut [u8], from: &[u8], to: &[u8]) {
    let at = bytes
        .windows(from.len())
        .position(|w| w == from)
        .expect("pattern present");
    bytes[at..at + to.len()].copy_from_slice(to);
}

#[test]
fn hostile_tensor_sizes_are_refused_before_allocating() {
    // value 2 of the tiny fp32 program is the fc weight with sizes [10, 256] (int32 vector)
    let mut b = pte();
    let sizes: Vec<u8> = [2u32, 10, 256]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let huge: Vec<u8> = [2u32, 0x7fff_ffff, 0x7fff_ffff]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    replace(&mut b, &sizes, &huge);
    let e = Program::parse(b).expect_err("2^62 elements");
    assert!(matches!(e, Error::TooLarge { .. }), "{e}");

    // an ETDump debug tensor claiming 2^40 elements
    let mut d = etdp();
    let sizes: Vec<u8> = [1i64, 4, 8, 8]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let huge: Vec<u8> = [1i64, 1 << 20, 1 << 20, 8]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    replace(&mut d, &sizes, &huge);
    assert!(matches!(ETDump::parse(&d), Err(Error::TooLarge { .. })));

    // a .npy header claiming 2^40 floats
    let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }";
    let mut n = b"\x93NUMPY\x01\x00".to_vec();
    let padded = format!("{header:<117}\n");
    n.extend_from_slice(&(padded.len() as u16).to_le_bytes());
    n.extend_from_slice(padded.as_bytes());
    n.extend_from_slice(&[0u8; 64]);
    assert!(matches!(read_npy(&n), Err(Error::TooLarge { .. })));
}

#[test]
fn debug_buffer_shorter_than_the_etdump_says_is_truncated() {
    let d = ETDump::parse(&etdp()).expect("etdump");
    let buf = common::read(&common::tiny().join("debug_buffer.bin"));
    assert!(captured_tensors(&d, &buf).is_ok());
    let e = captured_tensors(&d, &buf[..buf.len() / 4]).expect_err("short buffer");
    assert!(matches!(e, Error::Truncated { .. }), "{e}");
    assert!(e.to_string().contains("instruction"), "{e}");
}

#[test]
fn out_of_range_indices_are_named() {
    // instruction 0 of the tiny program: KernelCall op_index 0; make it 9 (4 operators exist)
    let mut b = pte();
    let args: Vec<u8> = [11u32, 4, 0, 1, 8, 11, 14, 15, 18, 19, 5, 5]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let bad: Vec<u8> = [11u32, 4, 0, 1, 8, 11, 14, 15, 18, 19, 5, 999]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    replace(&mut b, &args, &bad);
    let e = Program::parse(b).expect_err("arg 999");
    assert!(matches!(e, Error::OutOfRange { index: 999, .. }), "{e}");
    assert!(e.to_string().contains("args"), "{e}");
}

/// Programs with flipped bytes either fail to parse or run to an error or a result: the
/// runtime never panics on what a file says (shapes, indices, arguments).
#[test]
fn the_runtime_never_panics_on_corrupted_programs() {
    use etscope_core::runtime::{Runtime, Target};
    let input = read_npy(&npy()).expect("input");
    for name in [
        "model_int8_cortex_m55.pte",
        "model_fp32.pte",
        "model_int8_qdq_portable.pte",
    ] {
        let bytes = common::read(&common::tiny().join(name));
        let step = (bytes.len() / 600).max(1);
        for i in (0..bytes.len()).step_by(step) {
            for mask in [0x01u8, 0x10, 0x80] {
                let mut b = bytes.clone();
                b[i] ^= mask;
                let Ok(program) = Program::parse(b) else {
                    continue;
                };
                let Ok(rt) = Runtime::new(&program, 0, Target::default()) else {
                    continue;
                };
                let _ = rt.run(std::slice::from_ref(&input), true);
            }
        }
    }
}
