//! cargo-fuzz target `bpte`: see `etscope_fuzz_targets::bpte`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| etscope_fuzz_targets::bpte(data));
