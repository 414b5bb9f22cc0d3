//! Terminal escapes: control characters in what a session says reach no terminal, and logs and
//! echoed ids carry none.

use std::time::Duration;

use slate::live;

use crate::api::{json, slate, Running};

use super::{finished_within, standalone};

/// What hostile text carries: OSC 52 (write the clipboard), OSC 0 (set the window title),
/// CSI 2J (clear the screen) and a bare BEL.
const HOSTILE: &str = "\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}]0;pwned\u{7}\u{1b}[2J\u{7}";

/// The session of the escape test.
const ESCAPED: &str = "e5ca9ed0-0000-4000-8000-00000000e5ca";

/// True when `text` holds a byte a terminal would obey rather than show: a C0 control other than
/// a line end or a tab, DEL, or a C1 control.
fn has_controls(text: &str) -> bool {
    text.chars()
        .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{7f}')
}

/// Item 8: titles, prompts, folders, branches, item ids and reasons come from models, tools and
/// other programs; on a terminal their control characters are shown, never obeyed, by every
/// command that prints text. JSON stays JSON, with the characters escaped by serde.
#[cfg(unix)]
#[test]
fn control_characters_reach_no_terminal() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path().canonicalize().unwrap();
    let folder = home.join(format!("work/acme{HOSTILE}"));
    std::fs::create_dir_all(&folder).unwrap();
    let projects = home.join(".claude/projects/-work-acme");
    std::fs::create_dir_all(&projects).unwrap();
    let at = live::system_clock();
    let line = |extra: serde_json::Value| {
        let mut value = serde_json::json!({
            "sessionId": ESCAPED, "cwd": folder.display().to_string(), "version": "2.1.332",
            "gitBranch": format!("main{HOSTILE}"), "uuid": "u", "timestamp": at.to_string(),
        });
        for (key, field) in extra.as_object().unwrap() {
            value[key] = field.clone();
        }
        value.to_string() + "\n"
    };
    let transcript = [
        line(serde_json::json!({"type": "custom-title", "customTitle": format!("title{HOSTILE}")})),
        line(serde_json::json!({"type": "user",
            "message": {"role": "user", "content": format!("prompt{HOSTILE}")}})),
        line(
            serde_json::json!({"type": "assistant", "message": {"role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": format!("Bash{HOSTILE}"),
                "input": {"command": format!("make{HOSTILE}")}}]}}),
        ),
    ]
    .concat();
    std::fs::write(projects.join(format!("{ESCAPED}.jsonl")), transcript).unwrap();
    let table = home.join("processes.json");
    std::fs::write(
        &table,
        serde_json::json!([{
            "pid": 4242, "ppid": 1, "name": "claude", "exe": null, "cmd": ["claude"],
            "cwd": folder.display().to_string(),
            "start_time": at.minus(Duration::from_secs(60)).to_string(), "start_ticks": null
        }])
        .to_string(),
    )
    .unwrap();
    let table = table.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--processes", table]);
        let output = slate(&home, &all).output().unwrap();
        assert!(output.status.success(), "{args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    // A reason from the command line, and an item id written to the store by another program.
    run(&["park", "e5ca", "--reason", &format!("reason{HOSTILE}")]);
    let store = slate::store::open(&home.join(".local/share/slate/slate.db")).unwrap();
    let item = format!("item{HOSTILE}");
    store
        .put_work_item(&slate::store::WorkItem {
            id: item.clone(),
            title: format!("work{HOSTILE}"),
            status: slate::model::ItemStatus::Ready,
            deps: vec![format!("dep{HOSTILE}")],
            created: at,
        })
        .unwrap();
    let key = slate::model::SessionKey::new(slate::model::AgentKind::CLAUDE_CODE, ESCAPED);
    store.claim(&item, &key, at).unwrap();
    drop(store);

    let mut printed = vec![
        ("sessions", run(&["sessions"])),
        ("sessions --all", run(&["sessions", "--all"])),
        ("show", run(&["show", "e5ca"])),
        ("doctor", run(&["doctor"])),
        ("item list", run(&["item", "list"])),
    ];
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let unused = free.local_addr().unwrap().to_string();
    drop(free);
    let watch = Running::spawn(slate(
        &home,
        &["watch", "--listen", &unused, "--processes", table],
    ));
    printed.push(("watch", watch.line()));
    drop(watch);
    for (command, text) in &printed {
        assert!(
            !has_controls(text),
            "{command} printed a control character: {text:?}"
        );
    }
    // Every field was printed, each made visible the same way.
    let all: String = printed.iter().map(|(_, text)| text.as_str()).collect();
    for field in ["title", "prompt", "acme", "main", "item", "reason", "work"] {
        let shown = format!("{field}^[]52;c;cHduZWQ=^G^[]0;pwned^G^[[2J^G");
        assert!(all.contains(&shown), "{field} not shown as {shown}: {all}");
    }

    // JSON keeps the text as it is, escaped by serde.
    let listed = run(&["sessions", "--json"]);
    assert!(listed.contains(r"\u001b]52;c;"), "{listed}");
    let listed = json(&listed);
    assert_eq!(listed["sessions"][0]["title"], format!("title{HOSTILE}"));
}

/// Logging writes no colour codes when stderr is not a terminal, and `slate item done` and
/// `slate release` show an id's control characters instead of echoing them.
#[test]
fn logs_and_echoed_ids_carry_no_control_characters() {
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    // A transcript whose name carries escapes, and that is no file to read (a FIFO): the problem
    // is logged at the debug level, with its place.
    let projects = home.join(".claude/projects/-work-acme");
    std::fs::create_dir_all(&projects).unwrap();
    let fifo = projects.join(format!("{ESCAPED}{HOSTILE}.jsonl"));
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|status| status.success()), "mkfifo");
    let mut command = slate(home, &["sessions"]);
    command.env("SLATE_LOG", "debug");
    let sessions = finished_within(command, Duration::from_secs(20)).unwrap();
    let logged = String::from_utf8_lossy(&sessions.stderr);
    assert!(logged.contains("fifo"), "the FIFO was logged: {logged:?}");
    assert!(
        logged.contains("^[]0;pwned^G"),
        "its name shown: {logged:?}"
    );
    assert!(!has_controls(&logged), "{logged:?}");

    let item = format!("item{HOSTILE}");
    let store = slate::store::open(&home.join(".local/share/slate/slate.db")).unwrap();
    store
        .put_work_item(&slate::store::WorkItem {
            id: item.clone(),
            title: "work".to_string(),
            status: slate::model::ItemStatus::Ready,
            deps: Vec::new(),
            created: live::system_clock(),
        })
        .unwrap();
    drop(store);
    for args in [
        vec!["item", "done", item.as_str()],
        vec!["release", item.as_str()],
    ] {
        let output = standalone(home, &args);
        assert!(output.status.success(), "{args:?}: {output:?}");
        let said = String::from_utf8_lossy(&output.stdout);
        assert!(said.contains("item^[]52;"), "{args:?}: {said:?}");
        assert!(!has_controls(&said), "{args:?}: {said:?}");
    }
}
