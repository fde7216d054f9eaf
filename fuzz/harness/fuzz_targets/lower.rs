//! cargo-fuzz target `lower`: see `etscope_fuzz_targets::lower`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| etscope_fuzz_targets::lower(data));
