//! Slate's one integration-test binary. Each module below covers one area.

mod config;
mod store; // Slate's own SQLite store: round trips, migrations, kill -9, corruption and locks
mod tracker; // the state rules, replayed from fixtures/scenarios with a fake clock // the config file: defaults, unknown keys, the [steering] move, write-back
