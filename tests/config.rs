//! The config file: defaults, errors that name the key and its section, the move of
//! `[steering] session_idle_minutes` to `[project-policy]`, and the write-back at load.

use std::net::SocketAddr;

use slate::config::{self, Config, ConfigError};
use slate::model::Timestamp;

fn error_of(text: &str) -> String {
    match Config::parse(text) {
        Ok(config) => panic!("parsed when it should not have: {config:?}"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn an_empty_file_gives_the_defaults() {
    let config = Config::parse("").unwrap();
    assert_eq!(config, Config::default());
    assert_eq!(config.project_policy.session_idle_minutes, 20);
    assert_eq!(
        config.server.listen,
        "127.0.0.1:7411".parse::<SocketAddr>().unwrap()
    );
    assert!(config.notifications.enabled);
    assert_eq!(config.notifications.paused_until, None);
    assert_eq!(
        config.notifications.sound, None,
        "no sound unless asked for"
    );
    assert_eq!(config.cleanup.reclaim_after_minutes, 0);
    // A section that is present but empty also takes its defaults.
    assert_eq!(
        Config::parse("[server]\n[project-policy]\n").unwrap(),
        Config::default()
    );
}

#[test]
fn every_key_is_read() {
    let config = Config::parse(
        r#"
        [project-policy]
        session_idle_minutes = 35

        [server]
        listen = "[::1]:9000"

        [notifications]
        enabled = false
        paused_until = "2026-11-29T20:00:00Z"
        sound = "message-new-instant"

        [cleanup]
        reclaim_after_minutes = 5
        "#,
    )
    .unwrap();
    assert_eq!(config.project_policy.session_idle_minutes, 35);
    assert_eq!(
        config.server.listen,
        "[::1]:9000".parse::<SocketAddr>().unwrap()
    );
    assert!(!config.notifications.enabled);
    assert_eq!(
        config.notifications.paused_until,
        Timestamp::parse_rfc3339("2026-11-29T20:00:00Z")
    );
    assert_eq!(
        config.notifications.sound.as_deref(),
        Some("message-new-instant")
    );
    assert_eq!(config.cleanup.reclaim_after_minutes, 5);
}

#[test]
fn a_sound_is_a_name_from_the_sound_theme_never_a_path_or_a_command() {
    for good in ["message-new-instant", "dialog-warning", "bell", "x.y_z-1"] {
        let config = Config::parse(&format!("[notifications]\nsound = {good:?}\n")).unwrap();
        assert_eq!(config.notifications.sound.as_deref(), Some(good));
    }
    let long = "a".repeat(65);
    for bad in [
        "",
        "/usr/share/sounds/bell.oga",
        "../bell",
        "Bell",
        "-bell",
        "bell; rm -rf ~",
        "bell\u{202e}",
        long.as_str(),
    ] {
        let message = error_of(&format!(
            "[notifications]\nsound = {}\n",
            toml::Value::from(bad)
        ));
        assert!(
            message.contains("is not a sound name"),
            "{bad:?}: {message}"
        );
        assert!(message.contains("[notifications]"), "{message}");
    }
    let number = error_of("[notifications]\nsound = 3\n");
    assert!(number.contains("[notifications]"), "{number}");
}

#[test]
fn paused_until_takes_a_string_or_a_toml_time_but_needs_a_zone() {
    let bare =
        Config::parse("[notifications]\npaused_until = 2026-11-29T21:00:00+01:00\n").unwrap();
    assert_eq!(
        bare.notifications.paused_until,
        Timestamp::parse_rfc3339("2026-11-29T20:00:00Z")
    );
    let local = error_of("[notifications]\npaused_until = 2026-11-29T21:00:00\n");
    assert!(local.contains("with a zone"), "{local}");
    assert!(local.contains("[notifications]"), "{local}");
    let number = error_of("[notifications]\npaused_until = 5\n");
    assert!(number.contains("expected a time"), "{number}");
}

#[test]
fn a_config_written_out_reads_back_the_same() {
    let mut config = Config::default();
    config.project_policy.session_idle_minutes = 7;
    config.notifications.paused_until = Timestamp::parse_rfc3339("2026-11-29T20:00:00Z");
    config.notifications.sound = Some("bell".into());
    let text = toml::to_string(&config).unwrap();
    assert_eq!(Config::parse(&text).unwrap(), config);
}

#[test]
fn an_unknown_key_is_named_with_its_section_and_line() {
    let message = error_of("[project-policy]\nsesion_idle_minutes = 20\n");
    assert!(
        message.contains("unknown field `sesion_idle_minutes`"),
        "{message}"
    );
    assert!(message.contains("[project-policy]"), "{message}");
    assert!(message.contains("line 2"), "{message}");
    // Each section rejects keys it does not know, not only the first.
    let message = error_of("[cleanup]\nreclaim_after_minutes = 1\n\n[server]\nport = 80\n");
    assert!(message.contains("unknown field `port`"), "{message}");
    assert!(message.contains("[server]"), "{message}");
    assert!(message.contains("line 5"), "{message}");
    let message = error_of("[notifications]\nenable = true\n");
    assert!(message.contains("`enable`"), "{message}");
    let message = error_of("[cleanup]\nreclaim_after = 1\n");
    assert!(message.contains("`reclaim_after`"), "{message}");
}

#[test]
fn an_unknown_section_or_top_level_key_is_named() {
    let message =
        error_of("[project-policy]\nsession_idle_minutes = 20\n\n[colours]\ntray = \"red\"\n");
    assert!(message.contains("unknown field `colours`"), "{message}");
    assert!(!message.contains("in [project-policy]"), "{message}");
    let message = error_of("verbose = true\n");
    assert!(message.contains("unknown field `verbose`"), "{message}");
    // A section that was not moved is not silently accepted either.
    let message = error_of("[steering]\nsession_idle_minutes = 20\n");
    assert!(message.contains("`steering`"), "{message}");
}

#[test]
fn a_wrong_type_is_an_error_that_names_the_place() {
    let message = error_of("[project-policy]\nsession_idle_minutes = \"twenty\"\n");
    assert!(message.contains("invalid type"), "{message}");
    assert!(message.contains("[project-policy]"), "{message}");
    assert!(message.contains("line 2"), "{message}");
    let message = error_of("[project-policy]\nsession_idle_minutes = -3\n");
    assert!(message.contains("-3"), "{message}");
    let message = error_of("[notifications]\nenabled = \"yes\"\n");
    assert!(message.contains("invalid type"), "{message}");
    assert!(message.contains("[notifications]"), "{message}");
    let message = error_of("server = 5\n");
    assert!(message.contains("invalid type"), "{message}");
    let message = error_of("[server\n");
    assert!(message.contains("line 1"), "{message}");
}

#[test]
fn a_listen_address_off_this_machine_is_rejected() {
    for address in ["0.0.0.0:7411", "192.168.1.20:7411", "[::]:7411"] {
        let message = error_of(&format!("[server]\nlisten = \"{address}\"\n"));
        assert!(message.contains("not a loopback address"), "{message}");
        assert!(message.contains(address), "{message}");
        assert!(message.contains("[server]"), "{message}");
    }
    let message = error_of("[server]\nlisten = \"localhost:7411\"\n");
    assert!(message.contains("not an ip:port address"), "{message}");
    let config = Config::parse("[server]\nlisten = \"127.0.0.2:80\"\n").unwrap();
    assert_eq!(config.server.listen.port(), 80);
}

#[test]
fn the_steering_key_moves_to_project_policy_with_its_value() {
    let migrated = config::migrate("[steering]\nsession_idle_minutes = 35\n").unwrap();
    assert!(migrated.changed);
    assert_eq!(migrated.notes.len(), 1);
    assert!(migrated.notes[0].contains("moved"), "{:?}", migrated.notes);
    assert!(!migrated.text.contains("steering"), "{}", migrated.text);
    let config = Config::parse(&migrated.text).unwrap();
    assert_eq!(config.project_policy.session_idle_minutes, 35);

    let again = config::migrate(&migrated.text).unwrap();
    assert!(!again.changed);
    assert!(again.notes.is_empty());
    assert_eq!(again.text, migrated.text);
}

#[test]
fn the_move_keeps_other_keys_and_sections() {
    let text =
        "[steering]\nsession_idle_minutes = 35\nother = 1\n\n[server]\nlisten = \"127.0.0.1:1\"\n";
    let migrated = config::migrate(text).unwrap();
    let table: toml::Table = migrated.text.parse().unwrap();
    assert_eq!(table["steering"]["other"].as_integer(), Some(1));
    assert!(table["steering"].get("session_idle_minutes").is_none());
    assert_eq!(
        table["project-policy"]["session_idle_minutes"].as_integer(),
        Some(35)
    );
    assert_eq!(table["server"]["listen"].as_str(), Some("127.0.0.1:1"));
}

#[test]
fn when_both_keys_are_set_the_new_one_wins() {
    let text =
        "[steering]\nsession_idle_minutes = 35\n\n[project-policy]\nsession_idle_minutes = 12\n";
    let migrated = config::migrate(text).unwrap();
    assert!(migrated.changed);
    assert!(
        migrated.notes[0].contains("dropped"),
        "{:?}",
        migrated.notes
    );
    assert!(migrated.notes[0].contains("35"), "{:?}", migrated.notes);
    assert!(!migrated.text.contains("steering"), "{}", migrated.text);
    let config = Config::parse(&migrated.text).unwrap();
    assert_eq!(config.project_policy.session_idle_minutes, 12);
}

#[test]
fn a_text_with_nothing_to_move_comes_back_unchanged() {
    for text in [
        "",
        "# just a comment\n",
        "[project-policy]\nsession_idle_minutes = 20 # mine\n",
        "[steering]\nother = 1\n",
    ] {
        let migrated = config::migrate(text).unwrap();
        assert!(!migrated.changed, "{text}");
        assert_eq!(migrated.text, text);
    }
    assert!(matches!(
        config::migrate("[broken"),
        Err(ConfigError::Invalid { .. })
    ));
}

#[test]
fn load_or_default_writes_the_migrated_file_back() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("slate").join("config.toml");

    // A missing file gives the defaults and creates nothing.
    let (config, notes) = config::load_or_default(&path).unwrap();
    assert_eq!(config, Config::default());
    assert!(notes.is_empty());
    assert!(!path.exists());

    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // A backup the person made earlier is not overwritten.
    let own_backup = path.with_file_name("config.toml.bak");
    std::fs::write(&own_backup, "mine").unwrap();
    let original = "# my settings\n[steering]\nsession_idle_minutes = 35\n";
    std::fs::write(&path, original).unwrap();
    let (config, notes) = config::load_or_default(&path).unwrap();
    assert_eq!(config.project_policy.session_idle_minutes, 35);
    assert_eq!(notes.len(), 2, "{notes:?}");
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(written.contains("[project-policy]"), "{written}");
    assert!(!written.contains("steering"), "{written}");
    // The earlier text, comments and all, is kept next to it.
    let backup = path.with_file_name("config.toml.bak-2");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), original);
    assert_eq!(std::fs::read_to_string(&own_backup).unwrap(), "mine");
    // No temporary file is left behind.
    let mut names: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec!["config.toml", "config.toml.bak", "config.toml.bak-2"]
    );

    // The second boot finds nothing to move and leaves the file alone.
    let (config, notes) = config::load_or_default(&path).unwrap();
    assert_eq!(config.project_policy.session_idle_minutes, 35);
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), written);
}

#[test]
fn load_or_default_leaves_an_invalid_file_untouched() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("config.toml");
    let original = "[steering]\nsession_idle_minutes = 35\n\n[server]\nlisten = \"0.0.0.0:7411\"\n";
    std::fs::write(&path, original).unwrap();
    let err = config::load_or_default(&path).unwrap_err();
    assert!(err.to_string().contains("loopback"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    assert!(!folder.path().join("config.toml.bak").exists());

    // A path that cannot be read is an error that names it.
    let err = config::load_or_default(folder.path()).unwrap_err();
    assert!(matches!(err, ConfigError::Read { .. }), "{err:?}");
}
