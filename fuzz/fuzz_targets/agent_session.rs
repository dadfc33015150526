#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| musewire_core::agent::fuzzing::agent_session(data));
