//! Conformance tooling for musewire.
