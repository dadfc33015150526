#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| musewire_core::mcp::fuzzing::mcp_client(data));
