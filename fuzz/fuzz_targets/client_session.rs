#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| musewire_core::client::fuzzing::client_session(data));
