//! One token per push channel: a stand-in ntfy and a stand-in webhook, each on its own port,
//! receive only their own token, a channel that names no token file is sent none, and the one
//! `push-token` every channel was sent before is given to one channel by the config's migration,
//! kept where it was.

use std::time::Duration;

use slate::config::push::{LegacyToken, TokenFile};
use slate::model::Status;

use super::{
    eventually, live_with_push, push_to, write_token, Behaviour, Server, TOKEN, TOPIC,
    WEBHOOK_TOKEN,
};
use crate::api::finish_turn;
use crate::util::transcript_path;

#[test]
fn ntfy_and_a_webhook_on_servers_of_their_own_each_receive_only_their_own_token() {
    let temp = tempfile::tempdir().unwrap();
    let ntfy = Server::start(Behaviour::Answer);
    let webhook = Server::start(Behaviour::Answer);
    let push = push_to(
        Some(&format!("http://127.0.0.1:{}/{TOPIC}", ntfy.port)),
        Some(&format!("http://127.0.0.1:{}/hook", webhook.port)),
        false,
    );
    let (handle, _) = live_with_push(temp.path(), push, Some(0o600));
    assert_eq!(handle.live_sessions()[0].status, Status::Working);
    finish_turn(&transcript_path(temp.path()));
    assert!(
        eventually(Duration::from_secs(10), || {
            !ntfy.seen().is_empty() && !webhook.seen().is_empty()
        }),
        "ntfy: {:?}, webhook: {:?}",
        ntfy.seen(),
        webhook.seen()
    );
    std::thread::sleep(Duration::from_millis(500));
    for (server, own, other) in [
        (&ntfy, TOKEN, WEBHOOK_TOKEN),
        (&webhook, WEBHOOK_TOKEN, TOKEN),
    ] {
        let seen = server.seen();
        assert_eq!(seen.len(), 1, "{seen:#?}");
        assert_eq!(seen[0].headers["authorization"], format!("Bearer {own}"));
        let whole = format!("{:?}", seen[0]);
        assert!(!whole.contains(other), "the other channel's token: {whole}");
    }
    handle.shutdown();
}

#[test]
fn a_channel_that_names_no_token_file_is_sent_no_token() {
    let temp = tempfile::tempdir().unwrap();
    let ntfy = Server::start(Behaviour::Answer);
    let webhook = Server::start(Behaviour::Answer);
    let mut push = push_to(
        Some(&format!("http://127.0.0.1:{}/{TOPIC}", ntfy.port)),
        Some(&format!("http://127.0.0.1:{}/hook", webhook.port)),
        false,
    );
    push.ntfy_token_file = None;
    let (handle, _) = live_with_push(temp.path(), push, Some(0o600));
    finish_turn(&transcript_path(temp.path()));
    assert!(eventually(Duration::from_secs(10), || {
        !ntfy.seen().is_empty() && !webhook.seen().is_empty()
    }));
    assert_eq!(ntfy.seen()[0].headers.get("authorization"), None);
    assert_eq!(
        webhook.seen()[0].headers["authorization"],
        format!("Bearer {WEBHOOK_TOKEN}")
    );
    handle.shutdown();
}

#[test]
fn a_token_file_is_a_plain_name_in_the_config_folder_and_never_slate_s_own() {
    for name in ["push-token", "push-token-ntfy", "ntfy.token", "a_1"] {
        assert_eq!(TokenFile::parse(name).unwrap().name(), name);
    }
    for name in [
        "",
        ".hidden",
        "../token",
        "/etc/passwd",
        "sub/file",
        "a b",
        "token",
        "config.toml",
        "config.toml.bak",
    ] {
        assert!(TokenFile::parse(name).is_err(), "{name} taken");
    }
    let bad = toml::from_str::<slate::config::Config>(
        "[push]\nntfy = \"https://ntfy.sh/x\"\nntfy_token_file = \"../token\"\n",
    );
    assert!(bad.is_err());
}

#[test]
fn the_one_token_of_before_goes_to_one_channel_only() {
    let ntfy = "ntfy = \"https://ntfy.example.org/topic\"\n";
    let hook = "webhook = \"https://hooks.example.org/slate\"\n";
    let other = Some(LegacyToken { ntfy_shaped: false });
    let ntfy_shaped = Some(LegacyToken { ntfy_shaped: true });
    for (push, legacy, ntfy_file, webhook_file) in [
        (ntfy.to_owned(), other, Some("push-token"), None),
        (hook.to_owned(), ntfy_shaped, None, Some("push-token")),
        (
            format!("{ntfy}{hook}"),
            ntfy_shaped,
            Some("push-token"),
            None,
        ),
        (format!("{ntfy}{hook}"), other, None, Some("push-token")),
    ] {
        let text = format!("[push]\n{push}");
        let migrated = slate::config::migrate_with(&text, legacy).unwrap();
        assert!(migrated.changed, "{text}");
        assert_eq!(migrated.notes.len(), 1);
        let config = slate::config::Config::parse(&migrated.text).unwrap();
        let push = &config.push;
        assert_eq!(
            push.ntfy_token_file.as_ref().map(TokenFile::name),
            ntfy_file
        );
        assert_eq!(
            push.webhook_token_file.as_ref().map(TokenFile::name),
            webhook_file
        );
        // Migrated once: again, nothing changes.
        let again = slate::config::migrate_with(&migrated.text, legacy).unwrap();
        assert!(!again.changed);
    }
    // Nothing to do: no file of before, no channel, or a token file already named.
    for (text, legacy) in [
        (format!("[push]\n{ntfy}"), None),
        ("[push]\ncommands = true\n".to_owned(), other),
        (String::new(), other),
        (
            format!("[push]\n{ntfy}{hook}webhook_token_file = \"w\"\n"),
            other,
        ),
    ] {
        let migrated = slate::config::migrate_with(&text, legacy).unwrap();
        assert!(!migrated.changed, "{text}");
        assert_eq!(migrated.text, text);
    }
}

#[test]
fn a_config_of_before_is_migrated_on_disk_and_its_token_kept() {
    let temp = tempfile::tempdir().unwrap();
    let config = temp.path().join("config.toml");
    let text = format!(
        "[push]\nntfy = \"https://ntfy.example.org/{TOPIC}\"\n\
         webhook = \"https://hooks.example.org/slate\"\n"
    );
    std::fs::write(&config, &text).unwrap();
    let legacy = temp.path().join("push-token");
    write_token(&legacy, WEBHOOK_TOKEN, 0o600);
    let (loaded, notes) = slate::config::load_or_default(&config).unwrap();
    assert_eq!(
        loaded.push.webhook_token_file.as_ref().map(TokenFile::name),
        Some("push-token")
    );
    assert_eq!(loaded.push.ntfy_token_file, None);
    assert!(
        notes
            .iter()
            .any(|note| note.contains("the webhook's alone") && note.contains("ntfy")),
        "{notes:?}"
    );
    for note in &notes {
        assert!(!note.contains(WEBHOOK_TOKEN), "{note}");
    }
    assert_eq!(
        std::fs::read_to_string(&legacy).unwrap().trim(),
        WEBHOOK_TOKEN
    );
    assert!(std::fs::read_to_string(&config)
        .unwrap()
        .contains("webhook_token_file = \"push-token\""));
    let backup = temp.path().join("config.toml.bak");
    assert_eq!(std::fs::read_to_string(backup).unwrap(), text);
}
