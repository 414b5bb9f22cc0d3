//! Slate engine.
