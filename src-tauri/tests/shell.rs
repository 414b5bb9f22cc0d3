//! The shell's integration-test binary: the pure parts of the tray, the notifications and the
//! window's line protocol, driven with plain data and a fake clock. The desktop itself (tray over D-Bus, real notifications,
//! menu clicks, start at login) is tested by `desktop.sh` under Xvfb.

mod notify; // the notification policy: one per flip, none at start-up or while paused, bursts
mod tray; // the tray menu as data, and menu ids that read back
mod window; // the line protocol between the window process and the tray

use slate::model::{Session, Status};

/// A session in `status` with reason `code`/`text`, built from the wire format.
pub fn session(project: &str, id: &str, status: Status, code: &str, text: &str) -> Session {
    let value = serde_json::json!({
        "agent": "claude-code",
        "id": id,
        "folder": format!("/work/{project}"),
        "project": project,
        "title": format!("{project} work"),
        "last_prompt": "do the thing",
        "branch": "main",
        "row_time": "2026-11-29T12:00:00Z",
        "pid": 4242,
        "transcript": null,
        "model": null,
        "cli_version": null,
        "hosted": false,
        "status": status.as_str(),
        "session_state": {
            "status": status.as_str(),
            "active_at": null,
            "reason": {"code": code, "text": text},
            "presence": "present",
            "activity": "working",
            "intent": {"state": "none"},
            "custody": {"holds": [], "holds_work_claim": false, "reclaimable": false, "reason": "live"},
            "next_actor": {"actor": "operator", "reason": "r", "since": "2026-11-29T12:00:00Z"},
        },
    });
    serde_json::from_value(value).expect("a valid session object")
}

pub fn working(project: &str, id: &str) -> Session {
    session(project, id, Status::Working, "tool_running", "Running Bash")
}

pub fn waiting(project: &str, id: &str) -> Session {
    session(
        project,
        id,
        Status::Waiting,
        "permission_prompt",
        "Asks permission for Bash: cargo test",
    )
}
