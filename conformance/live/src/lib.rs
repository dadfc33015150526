//! Live conformance support: where the real agents are installed and how to start them in
//! isolation ([`peers`]), and a scripted OpenAI-compatible model server on loopback that
//! stands in for the LLM provider ([`model_server`]), one blocking face over both drivers
//! ([`support`]) and the scenarios written once over it ([`scenario`]). The suites are in
//! `tests/`.

pub mod model_server;
pub mod peers;
pub mod scenario;
pub mod support;
