//! Typing keys into a pane Slate reads: the one place Slate acts on a person's terminal.
//!
//! [`send`] sends the keys of one answer (`agents::keys::Key`) to the pane's backend, which puts
//! them in its terminal's own form (`terminals::tmux`'s `send-keys`, `terminals::kitty`'s
//! `send-text`, `terminals::wezterm`'s `send-text --no-paste`, and for a session under `slate
//! run` the keys' bytes written through its control socket, `terminals::hosted`). A pause in the
//! keys splits them into separate sends with a sleep between, for the agents that lose keys sent
//! in one burst. Each send has the same time limit as a read.
//!
//! It types only into the addresses `terminals` reads (never `TIOCSTI`, never synthetic typing
//! into the focused window), and it decides nothing: what to type and whether to type at all is
//! `answers`' business, which re-reads the screen first.

use std::time::Duration;

use slate_core::agents::keys::Key;

use super::backend::Address;

/// Sends `keys` to the pane at `address`, burst by burst. Stops at the first send that fails and
/// says which; keys before it were delivered.
pub fn send(address: &Address, keys: &[Key]) -> Result<(), String> {
    for (index, burst) in bursts(keys).into_iter().enumerate() {
        match burst {
            Burst::Pause(ms) => std::thread::sleep(Duration::from_millis(ms)),
            Burst::Keys(keys) => {
                address.backend.send(address, keys).map_err(|why| {
                    if index == 0 {
                        format!("cannot type into {}: {why}", address.describe())
                    } else {
                        format!("typing into {} stopped part-way: {why}", address.describe())
                    }
                })?;
            }
        }
    }
    Ok(())
}

/// The keys between two pauses, or a pause.
#[derive(Debug, PartialEq, Eq)]
enum Burst<'a> {
    Keys(&'a [Key]),
    Pause(u64),
}

fn bursts(keys: &[Key]) -> Vec<Burst<'_>> {
    let mut bursts = Vec::new();
    let mut start = 0;
    for (index, key) in keys.iter().enumerate() {
        if let Key::Pause(ms) = key {
            if start < index {
                bursts.push(Burst::Keys(&keys[start..index]));
            }
            bursts.push(Burst::Pause(*ms));
            start = index + 1;
        }
    }
    if start < keys.len() {
        bursts.push(Burst::Keys(&keys[start..]));
    }
    bursts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_split_the_keys_into_bursts() {
        let keys = [
            Key::Digit(3),
            Key::Pause(700),
            Key::Text("a".into()),
            Key::Pause(700),
            Key::Enter,
        ];
        assert_eq!(
            bursts(&keys),
            vec![
                Burst::Keys(&keys[0..1]),
                Burst::Pause(700),
                Burst::Keys(&keys[2..3]),
                Burst::Pause(700),
                Burst::Keys(&keys[4..5]),
            ]
        );
    }
}
