//! Server-sent events read from a response body's bytes, for `api.js`: the page follows the live
//! stream with `fetch()`, which can send the bearer token, and not with `EventSource`, which
//! cannot. It knows the event-stream format and nothing about what the events mean.
//!
//! The format, as the HTML standard defines it: lines end in CRLF, LF or CR (a chunk may end
//! between the CR and the LF); a line that starts with `:` is a comment (the server's keep-alive);
//! `field: value` loses one space after the colon, and a line without a colon is a field with an
//! empty value; `data` lines add up, joined by LF; `event` names the event (`message` when none
//! does); an empty line dispatches the event if it has data, and starts the next. `id` and
//! `retry` are read and ignored: the page keeps its own pauses, and every reconnect starts from a
//! snapshot. A byte-order mark at the start is dropped, and bytes that are not UTF-8 become
//! U+FFFD. An event, or a line, longer than the limit ends the reading with an error rather than
//! growing without bound.

/** The most an event's data, or one line, may hold before the stream is given up as broken. */
export const MAX_EVENT_CHARS = 32 * 1024 * 1024;

export class EventStreamParser {
  #decoder = new TextDecoder("utf-8");
  /** Text of a line not ended yet. */
  #pending = "";
  /** The last text ended in CR: an LF that starts the next one belongs to it. */
  #afterCR = false;
  #event = "";
  #data = [];
  #dataChars = 0;
  #onEvent;
  #limit;

  /**
   * @param {(event: {type: string, data: string}) => void} onEvent called once per dispatched event
   * @param {number} limit the most characters an event's data, or a line, may hold
   */
  constructor(onEvent, limit = MAX_EVENT_CHARS) {
    this.#onEvent = onEvent;
    this.#limit = limit;
  }

  /** Reads the next bytes of the body (a `Uint8Array`); throws when an event passes the limit. */
  feed(bytes) {
    this.#text(this.#decoder.decode(bytes, { stream: true }));
  }

  /**
   * The body ended. An event not closed by an empty line is dropped, as the standard says: the
   * stream was cut in the middle of it.
   */
  end() {
    this.#text(this.#decoder.decode());
    this.#pending = "";
    this.#event = "";
    this.#data = [];
    this.#dataChars = 0;
  }

  #text(text) {
    if (!text) return;
    if (this.#afterCR && text[0] === "\n") text = text.slice(1);
    this.#afterCR = false;
    const buffer = this.#pending + text;
    let at = 0;
    for (;;) {
      const lf = buffer.indexOf("\n", at);
      const cr = buffer.indexOf("\r", at);
      const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      if (end < 0) break;
      const line = buffer.slice(at, end);
      if (buffer[end] === "\r") {
        if (end + 1 === buffer.length) {
          this.#afterCR = true;
          at = end + 1;
        } else {
          at = buffer[end + 1] === "\n" ? end + 2 : end + 1;
        }
      } else {
        at = end + 1;
      }
      this.#line(line);
    }
    this.#pending = buffer.slice(at);
    if (this.#pending.length > this.#limit) throw new Error(`an event-stream line is longer than ${this.#limit} characters`);
  }

  #line(line) {
    if (line === "") {
      this.#dispatch();
      return;
    }
    if (line[0] === ":") return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value[0] === " ") value = value.slice(1);
    if (field === "event") {
      this.#event = value;
    } else if (field === "data") {
      this.#dataChars += value.length + 1;
      if (this.#dataChars > this.#limit) throw new Error(`an event's data is longer than ${this.#limit} characters`);
      this.#data.push(value);
    }
    // `id`, `retry` and unknown fields are ignored.
  }

  #dispatch() {
    const type = this.#event || "message";
    const data = this.#data;
    this.#event = "";
    this.#data = [];
    this.#dataChars = 0;
    if (!data.length) return;
    this.#onEvent({ type, data: data.join("\n") });
  }
}
