//! cargo-fuzz target `npy`: see `etscope_fuzz_targets::npy`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| etscope_fuzz_targets::npy(data));
