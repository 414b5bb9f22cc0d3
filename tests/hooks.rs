//! The agents' own hooks (docs/hooks.md): Slate's entries added to and taken out of real-shaped
//! configurations byte for byte (`settings`), what a hook event makes of a session in the
//! tracker (`rules`), `slate hook` itself, which must return within its budget whatever Slate
//! does (`command`), the spool at run time (`runtime`), and `slate hooks` on files as a person
//! keeps them (`files`).

mod command;
mod decisions; // the decision hook and its route (issue 37)
mod files;
mod rules;
mod runtime;
mod settings;
mod wire; // what an event carries: long ids refused, unknown fields refused (issue 35)
