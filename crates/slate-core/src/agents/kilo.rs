//! The Kilo Code CLI adapter: its description and which processes are Kilo Code.
//!
//! Kilo Code's CLI is a fork of OpenCode that kept OpenCode's tables and the JSON of its messages
//! and parts, under names of its own: `kilo.db` in `~/.local/share/kilo` (docs/formats.md §16). So
//! its store is read by the OpenCode reader (`sources::stores`, with the names below) and its rows
//! mean what `agents::opencode` says they mean; its processes are recognised by OpenCode's
//! recogniser with Kilo Code's program names. What is Kilo Code's own is here: where it keeps its
//! files, its title, its dialogs on screen and the keys that answer them.

use super::hooks::Hooks;
use super::keys::{DialogKeys, Press};
use super::opencode::{plugin_hooks, recognise_fork, Fork};
use super::screens::ScreenGrammar;
use super::titles::{Grammar, TitleKind};
use super::{
    AgentProcess, Base, Description, OpenCodeStore, Processes, Root, Sessions, StoreKind, Watch,
};
use crate::model::{AgentKind, ProcessInfo};

/// Kilo Code, as Slate knows it (docs/formats.md §16).
pub static DESCRIPTION: Description = Description {
    id: "kilo",
    name: "Kilo Code",
    product: "Kilo Code CLI",
    processes: Processes {
        programs: &["kilo", "kilocode"],
        recognise,
        relaunch_parent: None,
    },
    // `$XDG_DATA_HOME/kilo`, else `~/.local/share/kilo`; `$KILO_DB` names the main database
    // (docs/formats.md §16.1).
    root: Root {
        candidates: &[(Base::XdgData, "kilo"), (Base::Home, ".local/share/kilo")],
        variables: &["KILO_DB"],
    },
    watch: Watch {
        folders: &[("", false)],
        files: &[".db", ".db-wal"],
    },
    sessions: Sessions::Store(StoreKind::OpenCode(OpenCodeStore {
        database: "kilo",
        variable: "KILO_DB",
    })),
    listing: None,
    // `Kilo CLI`, or `Kilo CLI | <session title>`, whatever it does: the screen tells. The TUI's
    // `title_icon` setting puts an icon first (`◔` working, `⚠` waiting, `✓` finished), but it is
    // off unless set, so those titles are left unread (docs/formats.md §16.4).
    titles: Some(Grammar {
        animates: false,
        frames: &[],
        busy: &[],
        action_required: &[],
        idle: &["Kilo CLI"],
        otherwise: TitleKind::Other,
    }),
    // The dialogs are OpenCode's: a block behind the `┃` bar at the bottom, the permission
    // dialog's options in a row beside its key hints (docs/formats.md §16.4).
    screens: Some(ScreenGrammar {
        dialogs: &[
            super::opencode::PERMISSION_DIALOG,
            super::opencode::QUESTION_DIALOG,
        ],
        working: &["esc interrupt"],
        idle: &["ctrl+p commands"],
        status_lines: 3,
        markers: &[],
        margin: 5,
        breaks_after: &['/'],
        under_dialogs: 0,
    }),
    // OpenCode's plugin, in Kilo Code's config folder: the same bus events reach it
    // (docs/hooks.md).
    hooks: Some(&HOOKS),
    recorded: &["7.7.9"],
    // Enter takes the highlighted "Allow once". Escape opens a box that asks what to do instead,
    // and Enter there, with the box empty, rejects; Escape alone dismisses a question
    // (docs/formats.md §16.5).
    keys: Some(DialogKeys {
        deny: Press::Escape,
        confirm_reject: Some(Press::Enter),
        highlighted: Press::Enter,
        free_text: &["type your own answer"],
        text_pause_ms: 0,
        drawn_inputs: &["bash"],
        lines_under_input: 0,
    }),
};

/// Its plugin, where Kilo Code loads plugins: `plugin/` in its config folder.
static HOOKS: Hooks = plugin_hooks(&[
    (Base::XdgConfig, "kilo/plugin/slate-hooks.js"),
    (Base::Home, ".config/kilo/plugin/slate-hooks.js"),
]);

/// Kilo Code itself.
pub const KIND: AgentKind = AgentKind::of(&DESCRIPTION);

/// Kilo Code's programs: the native binary (`kilo`, or `.kilo` where the npm package's install
/// script put it beside its launchers) and the npm launchers `bin/kilo` and `bin/kilocode`, which
/// run under node and start it. `kilo daemon` is a server, like OpenCode's `serve`.
static KILO: Fork = Fork {
    kind: KIND,
    natives: &["kilo", ".kilo"],
    launchers: &["/bin/kilo", "/bin/kilocode"],
    daemons: &["daemon"],
};

/// Recognises a Kilo Code process (docs/formats.md §16.3).
pub fn recognise(process: &ProcessInfo) -> Option<AgentProcess> {
    recognise_fork(process, &KILO)
}
