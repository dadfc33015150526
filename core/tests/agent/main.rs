//! The agent side (`musewire_core::agent::Agent`), one module per topic over one harness (`common`).

mod common;
mod host;
mod paging;
mod pair;
mod session;
