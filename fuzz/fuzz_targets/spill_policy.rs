#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| musewire_core::spill::fuzzing::spill_policy(data));
