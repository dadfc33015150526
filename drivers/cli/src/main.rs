//! `musewire`: command-line tools for agent RPC streams.
fn main() {}
