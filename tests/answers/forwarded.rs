//! An answer to a session on another machine: a session from the wire keeps a dialog it reads,
//! what cannot be forwarded is refused before `ssh` runs, and the rest is forwarded over its link.

use std::path::Path;

use slate::agents::keys::Action;
use slate::model::AgentKind;

use slate::answers::{ErrorCode, Surface};
use slate::model::SessionKey;

use crate::util::needs;

use crate::api::slate;

use super::{print_of, request, StandIn, SESSION_ID};

#[test]
fn a_session_from_the_wire_keeps_a_dialog_it_reads_and_drops_one_it_cannot() {
    let session = crate::util::wire_session(
        "acme",
        "s1",
        slate::model::Status::Waiting,
        "permission_prompt",
        "asks",
    );
    let mut value = serde_json::to_value(&session).unwrap();
    assert!(
        value.get("dialog").is_none(),
        "absent, not null, without a dialog"
    );
    value["dialog"] = serde_json::json!({
        "kind": "permission",
        "summary": "Run: touch x.txt",
        "options": [
            {"number": 1, "label": "Yes", "action": "approve"},
            {"number": 2, "label": "Yes, always", "action": null},
            {"number": null, "label": "No", "action": "deny"}
        ],
        "fingerprint": "9f86d081884c7d65",
        "answerable": false,
        "why_not": "plain terminal: start it in tmux or under `slate run` to answer from here"
    });
    let read = slate::model::Session::from_wire(value.clone()).unwrap();
    let dialog = read.dialog.expect("a dialog this build reads");
    assert_eq!(dialog.options[2].number, None);
    assert!(!dialog.answerable);
    // A newer server's dialog (a kind or an action this build does not know) is left out, and the
    // session still reads.
    value["dialog"]["kind"] = serde_json::json!("poll");
    let read = slate::model::Session::from_wire(value.clone()).unwrap();
    assert!(read.dialog.is_none());
    value["dialog"]["kind"] = serde_json::json!("question");
    value["dialog"]["options"][0]["action"] = serde_json::json!("always");
    assert!(slate::model::Session::from_wire(value.clone())
        .unwrap()
        .dialog
        .is_none());
    // A session relayed from another machine keeps its dialog as that machine says it: an answer
    // is forwarded there.
    value["dialog"]["kind"] = serde_json::json!("permission");
    value["dialog"]["options"][0]["action"] = serde_json::json!("approve");
    value["dialog"]["answerable"] = serde_json::json!(true);
    value["dialog"].as_object_mut().unwrap().remove("why_not");
    let mut relayed = slate::model::Session::from_wire(value).unwrap();
    let machine = slate::model::Machine::new("box").unwrap();
    slate::remote::view::mark_machine(&mut relayed, &machine);
    assert_eq!(relayed.machine, Some(machine));
    let dialog = relayed.dialog.unwrap();
    assert!(dialog.answerable);
    assert_eq!(dialog.why_not, None);
}

#[test]
fn what_cannot_be_forwarded_to_another_machine_is_refused_before_ssh_runs() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".config/slate");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[[remote]]\nname = \"box\"\ndestination = \"box.example\"\n",
    )
    .unwrap();
    // An `ssh` first on the PATH that only says it ran.
    let bin = home.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let ran = home.path().join("ssh-ran");
    std::fs::write(
        bin.join("ssh"),
        format!("#!/bin/sh\ntouch '{}'\nexit 255\n", ran.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        bin.join("ssh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let refused = |args: &[&str], status: i32, says: &str| {
        let output = slate(home.path(), args)
            .env("SLATE_STANDALONE", "1")
            .env("PATH", &path)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(status), "{args:?}: {output:?}");
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(said.contains(says), "{args:?}: {said}");
        assert!(!ran.exists(), "{args:?} ran ssh");
    };
    refused(&["approve", "box:4d2c;touch x"], 1, "cannot be sent to box");
    refused(&["deny", "box:$(reboot)"], 1, "cannot be sent to box");
    refused(
        &["approve", "box:-oProxyCommand=x"],
        1,
        "cannot be sent to box",
    );
    refused(
        &["answer", "box:4d2c1a7e", "Postgres"],
        1,
        "by its number only",
    );
    refused(
        &["approve", "box:4d2c1a7e", "--dialog", "not-a-print"],
        1,
        "16 lowercase hex digits",
    );
}

/// The stand-in's HOME served as the machine `box` by a real sshd on 127.0.0.1, and a local HOME
/// that follows it with no Slate running.
struct Remote {
    sshd: crate::sshd::Sshd,
    local: tempfile::TempDir,
}

impl Remote {
    fn serve(stand_in: &StandIn) -> Remote {
        // The remote's own `slate` looks for no server of its own: it answers itself.
        let config = stand_in.home.join(".config/slate");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(
            config.join("config.toml"),
            "[server]\nlisten = \"127.0.0.1:0\"\n",
        )
        .unwrap();
        let slate_folder = crate::sshd::slate_folder(Path::new(env!("CARGO_BIN_EXE_slate")));
        let sshd = crate::sshd::Sshd::start(
            &stand_in.temp.path().join("sshd"),
            &[crate::sshd::Account::with_slate(
                "box",
                &stand_in.home,
                &slate_folder,
            )],
        );
        let local = tempfile::tempdir().unwrap();
        let config = local.path().join(".config/slate");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(
            config.join("config.toml"),
            format!(
                "[server]\nlisten = \"127.0.0.1:0\"\n\n[[remote]]\nname = \"box\"\n\
                 destination = \"box\"\nssh_args = [\"-F\", \"{}\"]\n",
                sshd.ssh_config().display()
            ),
        )
        .unwrap();
        Remote { sshd, local }
    }

    fn entry(&self) -> slate::config::RemoteEntry {
        slate::config::RemoteEntry::new(
            slate::model::Machine::new("box").unwrap(),
            "box",
            vec!["-F".into(), self.sshd.ssh_config().display().to_string()],
        )
        .unwrap()
    }
}

#[test]
#[ignore = "slow tier: needs tmux, sshd, ssh and ssh-keygen"]
fn an_answer_to_a_session_on_another_machine_is_forwarded_over_its_link() {
    needs(&["tmux", "sshd", "ssh", "ssh-keygen"]);
    use slate::remote::{forward, LinkOptions};

    let stand_in = StandIn::start("react");
    let remote = Remote::serve(&stand_in);
    let options = LinkOptions::default();
    let shown = print_of("permission-touch.txt");

    // A fingerprint other than the one on screen: the remote refuses, nothing is typed.
    let changed = forward::respond(
        &remote.entry(),
        &options,
        SESSION_ID,
        &request(Action::Approve, None, "0123456789abcdef"),
    )
    .unwrap_err();
    assert_eq!(changed.code, ErrorCode::DialogChanged, "{changed}");
    assert!(changed.message.starts_with("on box: "), "{changed}");
    assert_eq!(stand_in.keys(), "");

    // The command line of a HOME that follows `box` reads the dialog from there, shows it, and
    // the remote's Slate types the approval into the stand-in's pane once.
    let approved = slate(
        remote.local.path(),
        &["approve", &format!("box:{}", &SESSION_ID[..8]), "--yes"],
    )
    .stdin(std::process::Stdio::null())
    .output()
    .unwrap();
    let said = String::from_utf8_lossy(&approved.stdout);
    assert_eq!(approved.status.code(), Some(0), "{approved:?}");
    assert!(said.contains("touch"), "{said}");
    assert!(said.contains("answered: approve (option 1)"), "{said}");
    assert_eq!(stand_in.keys(), "1");
    stand_in.wait_showing("working-sleep.txt");

    // Now at no dialog: said through the link, nothing typed.
    let again = forward::respond(
        &remote.entry(),
        &options,
        SESSION_ID,
        &request(Action::Approve, None, &shown),
    )
    .unwrap_err();
    assert_eq!(again.code, ErrorCode::NotAtDialog, "{again}");
    assert_eq!(stand_in.keys(), "");

    // Both stores hold the answer: this machine's under `box:ID`, the remote's under its id.
    let key = SessionKey::new(AgentKind::CODEX, SESSION_ID);
    let here = slate::store::open(&remote.local.path().join(".local/share/slate/slate.db"))
        .unwrap()
        .answers(
            &key.clone()
                .on(Some(slate::model::Machine::new("box").unwrap())),
            5,
        )
        .unwrap();
    assert_eq!(here.len(), 1, "{here:?}");
    assert_eq!(here[0].outcome, "answered");
    assert_eq!(here[0].fingerprint, shown);
    let there = slate::store::open(&stand_in.home.join(".local/share/slate/slate.db"))
        .unwrap()
        .answers(&key, 5)
        .unwrap();
    let outcomes: Vec<&str> = there.iter().map(|record| record.outcome.as_str()).collect();
    assert_eq!(outcomes, ["not_at_dialog", "answered", "dialog_changed"]);
    assert!(there.iter().all(|record| record.surface == Surface::Cli));
}
