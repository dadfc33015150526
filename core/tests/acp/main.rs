//! The ACP bridge (`musewire_core::acp::Bridge`), one module per topic over one harness (`support`).

mod backpressure;
mod bad_input;
mod bridge;
mod config;
mod dialogs;
mod fork_delete;
mod load_without_pages;
mod mcp;
mod pi_versions;
mod plan;
mod prompt_after_cancel;
mod prompt_budget;
mod prompt_content;
mod queued_prompts;
mod reload;
mod restart;
mod review;
mod sessions;
mod start_budget;
mod status_usage;
mod stop;
mod support;
mod thought;
mod tool_cards;
mod tools;
mod waiting_requests;
