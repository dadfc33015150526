//! Tool-result content blocks (`blocks`): the seed's examples and properties, as unit tests
//! since they reach the lane's crate-private steps (classification, the credential check,
//! labels, rendering).

mod examples;
mod props;
