//! The framing fuzz bodies (feature `fuzzing`) run on fixed seeds, so `cargo test` keeps them
//! compiling and passing between fuzz runs: FRAME-01/02 (line_decoder), FRAME-07..09
//! (reassembler), FRAME-11/12 (encode_roundtrip).
#![cfg(feature = "fuzzing")]

use musewire_core::frame::fuzzing;

mod seeds;

/// This file's seeds.
fn seeds(count: usize, max_len: usize) -> Vec<Vec<u8>> {
    seeds::seeds(0x9e37_79b9_7f4a_7c15, count, max_len)
}

#[test]
fn frame_01_line_decoder_fuzz_body_on_seeds() {
    let mut inputs = seeds(300, 400);
    inputs.push(b"\x40{\"type\":\"a\"}\r\n\n[1]\n{\"type\":\"rpc_chunk\"}\nxx".to_vec());
    inputs.push(b"\x05aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n{}\n".to_vec());
    for input in &inputs {
        fuzzing::line_decoder(input);
    }
}

#[test]
fn frame_09_reassembler_fuzz_body_on_seeds() {
    for input in seeds(300, 200) {
        fuzzing::reassembler(&input);
    }
}

#[test]
fn frame_11_encode_roundtrip_fuzz_body_on_seeds() {
    let mut inputs = seeds(40, 64);
    inputs.push(b"\xff{\"type\":\"agent_end\",\"messages\":[1,2,3]}".to_vec());
    inputs.push(b"\x81[1,2]".to_vec());
    for input in &inputs {
        fuzzing::encode_roundtrip(input);
    }
}
