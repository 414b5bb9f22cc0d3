//! Slate's one integration-test binary. Each module below covers one area.

mod tracker; // the state rules, replayed from fixtures/scenarios with a fake clock
