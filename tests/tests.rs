//! Slate's one integration-test binary. Each module below covers one area.

mod tracker; // the state rules, replayed from fixtures/scenarios with a fake clock
mod store; // Slate's own SQLite store: round trips, migrations, kill -9, corruption and locks
mod config; // the config file: defaults, unknown keys, the [steering] move, write-back
