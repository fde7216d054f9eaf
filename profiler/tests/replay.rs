//! Replaying recorded streams of real ETDumps through the framing decoder and the live aggregate.

use std::path::Path;

use etscope_core::analysis::profile::profile;
use etscope_core::formats::etdump::ETDump;
use etscope_profiler::framing::FramingError;
use etscope_profiler::replay::replay;
use etscope_profiler::LiveProfile;

fn fixture(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/tiny_conv_relu_linear")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn concatenated_etdumps_replay_frame_by_frame_in_any_chunk_size() {
    let a = fixture("etdump_profile_5runs.etdp");
    let b = fixture("etdump.etdp");
    let stream = [a.clone(), b.clone(), a.clone()].concat();
    for chunk in [1, 7, 64, 1024, stream.len()] {
        let frames = replay(&stream, chunk).expect("well-formed stream");
        assert_eq!(frames.len(), 3, "chunk {chunk}");
        assert_eq!(frames[1].offset, a.len() as u64);
        assert_eq!(frames[0].etdump, ETDump::parse(&a).expect("a"));
        assert_eq!(frames[1].etdump, ETDump::parse(&b).expect("b"));
    }
}

#[test]
fn live_aggregate_equals_one_big_etdump() {
    let a = fixture("etdump_profile_5runs.etdp");
    let frames = replay(&[a.clone(), a.clone()].concat(), 256).expect("stream");
    let mut live = LiveProfile::new();
    for f in frames {
        live.add(f.etdump);
    }
    let got = live.profile(None).expect("profile");
    let single = profile(&ETDump::parse(&a).expect("a"), None);
    assert_eq!(got.runs, 2 * single.runs);
    for (g, s) in got.rows.iter().zip(&single.rows) {
        assert_eq!(
            g.stats.raw,
            [s.stats.raw.clone(), s.stats.raw.clone()].concat()
        );
    }
}

#[test]
fn a_stream_cut_mid_frame_or_out_of_sync_is_an_error_naming_the_offset() {
    let a = fixture("etdump.etdp");
    let cut = [a.clone(), a[..a.len() / 2].to_vec()].concat();
    match replay(&cut, 100) {
        Err(FramingError::Incomplete { offset, missing }) => {
            assert_eq!(offset, a.len() as u64);
            assert_eq!(missing as usize, a.len() - a.len() / 2);
        }
        other => panic!("expected Incomplete, got {other:?}"),
    }
    let garbage = [a.clone(), vec![0xff; 16]].concat();
    assert!(matches!(
        replay(&garbage, 64),
        Err(FramingError::OutOfSync { .. })
    ));
    let pte = fixture("model_fp32.pte");
    assert!(replay(&pte, 64).is_err());
}
