//! Sessions as the engine sends them, for the shell's unit tests.

use slate::model::Session;

pub fn session(id: &str, status: &str) -> Session {
    serde_json::from_value(serde_json::json!({
        "agent": "claude-code",
        "id": id,
        "folder": "/work/acme",
        "project": "acme",
        "title": "acme work",
        "last_prompt": "do the thing",
        "branch": "main",
        "row_time": "2026-11-29T12:00:00Z",
        "pid": 4242,
        "transcript": null,
        "model": null,
        "cli_version": null,
        "hosted": false,
        "status": status,
        "session_state": {
            "status": status,
            "active_at": null,
            "reason": {"code": "turn_finished", "text": "Finished its turn"},
            "presence": "present",
            "activity": "between_turns",
            "intent": {"state": "none"},
            "custody": {"holds": [], "holds_work_claim": false, "reclaimable": false, "reason": "live"},
            "next_actor": {"actor": "operator", "reason": "r", "since": "2026-11-29T12:00:00Z"},
        },
    }))
    .expect("a session object")
}
