//! cargo-fuzz target `etrecord`: see `etscope_fuzz_targets::etrecord`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| etscope_fuzz_targets::etrecord(data));
