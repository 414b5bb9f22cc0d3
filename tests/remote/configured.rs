//! Remotes as configured and shown: the `[[remote]]` config edits that keep the rest of the file,
//! the tray menu's note for an unreachable machine and the MACHINE column.

use slate::config::{self, Config};
use slate::model::{Session, Status};
use slate::policy::menu::{menu_model, Entry, MenuAction, MenuState, Pause};

use crate::util::{waiting, working};

use super::{at, codex, entry, machine, Watched};

// ---------------------------------------------------------------------------------------------
// The config file.

const CONFIG: &str = "# Slate's config: my notes stay.\n\
[notifications]\n\
enabled = true # keep them\n\
\n\
[[remote]]\n\
# the build box\n\
name = \"build\"\n\
destination = \"ci@build.example.com\"\n\
\n\
[cleanup]\n\
reclaim_after_minutes = 5\n";

#[test]
fn adding_and_removing_a_remote_keeps_the_rest_of_the_file() {
    let added = config::with_remote_added(
        CONFIG,
        &entry("box", "dev@box", &["-p", "2222", "-o", "Compression=yes"]),
    )
    .unwrap();
    // The new table goes after the other remotes; every other byte stays where it was.
    let build = "destination = \"ci@build.example.com\"\n";
    let expected = CONFIG.replace(
        build,
        &format!(
            "{build}\n[[remote]]\nname = \"box\"\ndestination = \"dev@box\"\n\
             ssh_args = [\"-p\", \"2222\", \"-o\", \"Compression=yes\"]\n"
        ),
    );
    assert_eq!(added, expected);
    let parsed = Config::parse(&added).unwrap();
    let names: Vec<&str> = parsed.remotes.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["build", "box"]);
    assert_eq!(
        parsed.remotes[1].ssh_args,
        ["-p", "2222", "-o", "Compression=yes"]
    );
    assert_eq!(parsed.cleanup.reclaim_after_minutes, 5);

    let removed = config::with_remote_removed(&added, &machine("box"))
        .unwrap()
        .unwrap();
    assert_eq!(removed.trim_end(), CONFIG.trim_end());
    assert_eq!(
        config::with_remote_removed(&removed, &machine("nothere")).unwrap(),
        None
    );
    let without = config::with_remote_removed(&removed, &machine("build"))
        .unwrap()
        .unwrap();
    assert!(
        without.contains("# Slate's config: my notes stay."),
        "{without}"
    );
    assert!(without.contains("enabled = true # keep them"), "{without}");
    assert!(Config::parse(&without).unwrap().remotes.is_empty());
}

#[test]
fn a_taken_name_a_duplicate_an_unknown_key_or_a_broken_file_is_refused() {
    let taken = config::with_remote_added(CONFIG, &entry("build", "other", &[])).unwrap_err();
    assert!(taken.to_string().contains("already configured"), "{taken}");
    let twice = "[[remote]]\nname = \"a\"\ndestination = \"x\"\n\n[[remote]]\nname = \"a\"\ndestination = \"y\"\n";
    let error = Config::parse(twice).unwrap_err().to_string();
    assert!(error.contains("line 6"), "{error}");
    assert!(error.contains("two remotes are named \"a\""), "{error}");
    let unknown = "[[remote]]\nname = \"a\"\ndestination = \"x\"\nport = 22\n";
    let error = Config::parse(unknown).unwrap_err().to_string();
    assert!(
        error.contains("line 4") && error.contains("`port`"),
        "{error}"
    );
    let bad_name = "[[remote]]\nname = \"a:b\"\ndestination = \"x\"\n";
    assert!(Config::parse(bad_name).is_err());
    let broken = "[notifications\nenabled = true\n";
    assert!(config::with_remote_added(broken, &entry("box", "box", &[])).is_err());

    // The file on disk: a missing one is created, a broken one is left as it is.
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("slate/config.toml");
    let box_entry = entry("box", "box", &[]);
    assert!(
        config::edit_file(&file, |text| config::with_remote_added(text, &box_entry)
            .map(Some))
        .unwrap()
    );
    assert_eq!(
        config::load_or_default(&file).unwrap().0.remotes,
        std::slice::from_ref(&box_entry)
    );
    std::fs::write(&file, broken).unwrap();
    let error = config::edit_file(&file, |text| {
        config::with_remote_added(text, &box_entry).map(Some)
    })
    .unwrap_err()
    .to_string();
    assert!(error.contains(&file.display().to_string()), "{error}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), broken);
}

// ---------------------------------------------------------------------------------------------
// The tray and the table.

#[test]
fn the_menu_names_an_unreachable_machine_and_leaves_its_sessions_out() {
    let mut watched = Watched::new(&[entry("box", "box", &[]), entry("gpu", "gpu", &[])]);
    watched.snapshot("box", vec![codex("api-server", "s1", Status::Waiting)], 1);
    watched.snapshot("gpu", vec![codex("train", "s2", Status::Waiting)], 1);
    watched.lost("gpu", 2);
    let mut live: Vec<Session> = watched.remotes.sessions().cloned().collect();
    live.push(waiting("local-proj", "s3"));
    let reports = watched.remotes.reports();
    let entries = menu_model(
        &live,
        MenuState {
            pause: Pause::Off,
            autostart: false,
            config_error: None,
            remotes: &reports,
        },
        at(3),
    );
    let items: Vec<(String, Option<MenuAction>)> = entries
        .iter()
        .filter_map(|entry| match entry {
            Entry::Item { label, action } => Some((label.clone(), Some(action.clone()))),
            Entry::Note(text) => Some((text.clone(), None)),
            _ => None,
        })
        .take(3)
        .collect();
    assert!(
        items[0].0.starts_with("box · api-server · Codex — "),
        "{items:?}"
    );
    assert!(
        items[1].0.starts_with("local-proj · Claude Code — "),
        "{items:?}"
    );
    assert!(
        items[2].0.starts_with("gpu is unreachable (since "),
        "{items:?}"
    );
    assert_eq!(items[2].1, None);
    assert_eq!(slate::policy::needs_you_count(&live), 2);
    // A remote session's menu id reads back with its machine.
    let action = items[0].1.clone().unwrap();
    assert_eq!(MenuAction::parse(&action.id()), Some(action.clone()));
    let MenuAction::Focus(key) = action else {
        panic!("not a focus action");
    };
    assert_eq!(key.machine, Some(machine("box")));
}

#[test]
fn the_sessions_table_has_a_machine_column_when_remotes_are_configured() {
    let mut remote = codex("api-server", "s1", Status::Waiting);
    remote.machine = Some(machine("box"));
    remote.unreachable_since = Some(at(1));
    let local = working("acme", "s2");
    let table = slate::report::table_with(
        &[remote.clone(), local.clone()],
        at(2),
        slate::report::Listed::Live,
        &[],
        true,
    );
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("MACHINE      STATUS"), "{table}");
    assert!(lines[1].starts_with("box          Needs you"), "{table}");
    assert!(lines[1].ends_with("(unreachable)"), "{table}");
    assert!(lines[2].starts_with("local        Working"), "{table}");
    assert!(table.contains("2 sessions, 0 need you"), "{table}");
    let plain = slate::report::table(&[local], at(2), slate::report::Listed::Live, &[]);
    assert!(plain.starts_with("STATUS"), "{plain}");
    // Serialized, a local session says `"machine": null`, a remote one its name.
    let value = serde_json::to_value(&remote).unwrap();
    assert_eq!(value["machine"], "box");
    assert!(value["unreachable_since"].is_string());
    let value = serde_json::to_value(working("acme", "s2")).unwrap();
    assert!(value["machine"].is_null() && value.get("machine").is_some());
    assert!(value.get("unreachable_since").is_none());
}
