//! What an OpenCode (or Kilo Code) assistant message row says its model call used: the row's
//! `tokens` and the `cost` OpenCode wrote for it (docs/formats.md §4.5), under the message's id,
//! so a row read again (every read of a stored session reads its newest rows again) counts once.

use serde_json::Value;

use crate::agents::{usage_observation, Observation};
use crate::model::usage::{self, Call, Tokens};

/// The usage of one assistant message row, if it states any. `input` leaves the cache out;
/// `reasoning` is billed as output.
pub(super) fn observe(message_id: &str, data: &Value) -> Option<Observation> {
    let tokens = data.get("tokens").filter(|usage| !usage.is_null())?;
    let cache = tokens.get("cache").unwrap_or(&Value::Null);
    let call = usage::tokens(tokens, ["input", "output", "", ""]).and_then(|read| {
        let reasoning = usage::count(tokens, "reasoning")?;
        let (cache_read, cache_write) = if cache.is_null() {
            (0, 0)
        } else {
            (usage::count(cache, "read")?, usage::count(cache, "write")?)
        };
        let model = data.get("modelID").and_then(Value::as_str);
        let tokens = Tokens {
            output: read.output.saturating_add(reasoning),
            cache_read,
            cache_write,
            ..read
        };
        Ok(Call::response(
            Some(message_id.to_owned()),
            model.map(str::to_owned),
            tokens,
        )
        .with_cost(usage::cost_usd(data.get("cost"))))
    });
    Some(usage_observation(call, tokens))
}
