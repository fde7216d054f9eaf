//! cargo-fuzz target `pte`: see `etscope_fuzz_targets::pte`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| etscope_fuzz_targets::pte(data));
