//! The host side (`musewire_core::client::Client`), one module per topic over one harness (`common`).

mod common;
mod pi_host_tools;
mod read_output;
mod session;
