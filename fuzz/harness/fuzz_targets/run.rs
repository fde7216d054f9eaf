//! cargo-fuzz target `run`: see `etscope_fuzz_targets::run`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| etscope_fuzz_targets::run(data));
