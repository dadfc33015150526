#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| musewire_core::acp::fuzzing::bridge_session(data));
