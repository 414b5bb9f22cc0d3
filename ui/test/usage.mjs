//! The window's usage words checked in Node alone (`ui/usage.js`): every cost says what it is, an
//! estimate that leaves tokens out is a floor, no usage is "not recorded" (never $0), and the day's
//! total counts today's sessions only.

import { costText, dayTotal, tokensText, usageText } from "../usage.js";

function equal(actual, expected, what) {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}

/** A session whose usage cost `usd` on `basis`, active at `at`. */
export function costing(usd, basis, unpriced = 0, at = new Date().toISOString()) {
  return {
    row_time: at,
    usage: {
      input_tokens: 1000,
      output_tokens: 200,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      models: ["claude-opus-5-5"],
      context_tokens: 1000,
      context_percent: 0.1,
      cost_usd: usd,
      cost_basis: basis,
      priced_tokens: 1200 - unpriced,
      unpriced_tokens: unpriced,
    },
  };
}

export async function usageUnits(check) {
  await check("usage: every cost says what it is, and a partial estimate is a floor", async () => {
    equal(costText(0.1234, "estimate", 0), "$0.12 estimate", "estimate");
    equal(costText(0.1234, "estimate", 5), "≥ $0.12 estimate", "partial");
    equal(costText(2, "reported", 0), "$2.00 reported", "reported");
    equal(costText(null, "unknown", 1200), "no price", "unknown");
    equal(costText(3, "unknown", 0), "no price", "a figure under unknown is not shown");
    equal(tokensText(950), "950", "tokens");
    equal(tokensText(12_345), "12.3k", "thousands");
    equal(tokensText(4_560_000), "4.56M", "millions");
    equal(usageText({}), "usage not recorded", "no usage is not $0");
    equal(usageText(costing(0.5, "estimate", 10)), "1.2k tokens · ≥ $0.50 estimate · context 0.1%", "a row's line");
  });

  await check("usage: the day's total sums today's sessions and says what the sum is", async () => {
    const now = Date.parse("2026-12-07T12:00:00Z");
    const yesterday = "2026-12-06T23:59:00Z";
    const all = dayTotal([costing(1, "reported"), costing(2, "reported"), costing(50, "reported", 0, yesterday)], now);
    equal([all.sessions, all.usd, all.basis], [2, 3, "reported"], "two reported today, yesterday's left out");
    const mixed = dayTotal([costing(1, "reported"), costing(2, "estimate"), { row_time: "2026-12-07T10:00:00Z" }], now);
    equal([mixed.sessions, mixed.usd, mixed.basis, mixed.notRecorded], [3, 3, "estimate", 1], "a reported and an estimate are an estimate");
    const floor = dayTotal([costing(1, "estimate"), costing(null, "unknown", 1200)], now);
    equal([floor.usd, floor.basis, floor.unpriced], [1, "estimate", 1200], "a session with no price makes the sum a floor");
    const none = dayTotal([{ row_time: "2026-12-07T10:00:00Z" }], now);
    equal([none.usd, none.basis, none.notRecorded], [null, "unknown", 1], "nothing recorded is no figure");
  });
}
