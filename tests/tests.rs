//! Slate's one integration-test binary. Each module below covers one area.

mod gemini; // the Gemini CLI adapter: chat folding, processes, project folders
mod tracker; // the state rules, replayed from fixtures/scenarios with a fake clock
