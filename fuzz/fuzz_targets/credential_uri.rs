#![no_main]
libfuzzer_sys::fuzz_target!(
    |data: &[u8]| musewire_core::blocks::fuzzing::fuzz_credential_uri(data)
);
