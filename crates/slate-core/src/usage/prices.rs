//! The dated price table Slate ships, the config's overrides, each model's context window, and
//! the estimate of a session's cost from its tokens.
