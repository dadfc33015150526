//! Tool-result content blocks (`musewire_core::blocks`): the seed's examples and properties.

mod examples;
mod props;
