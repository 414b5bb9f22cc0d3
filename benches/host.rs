//! The cost of `slate run`'s screen model on the relay's hot path. Prints figures; asserts
//! nothing.
//!
//! The output is every coloured dialog screen recorded from the real CLIs
//! (`fixtures/screens/*/*/ansi/*.ansi`, each drawn as a program would: clear, home, rows apart by
//! CR LF), repeated to `SLATE_BENCH_MB` megabytes (16). It goes through `host::pass_through`, the
//! relay's loop, from memory to `/dev/null` (a write call per chunk, as to a terminal), in the
//! chunks a pseudo-terminal read gives
//! (`SLATE_BENCH_CHUNK` bytes, 4096): first without the screen model, then feeding a 200x50 model
//! on its own thread as `slate run` does. For each, the median over `SLATE_BENCH_RUNS` runs (9) of
//! the relay's time per megabyte; for the model, also how long after the relay finished it had
//! drawn everything, and the model's own drawing speed.
//!
//! Run with `cargo bench --bench host`.

use std::io::Read;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use slate::host::screen::ScreenModel;
use slate::host::{pass_through, ModelFeed};

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Reads at most `chunk` bytes a call, as a pseudo-terminal does.
struct Chunked<'a> {
    data: &'a [u8],
    chunk: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let take = self.data.len().min(self.chunk).min(buffer.len());
        buffer[..take].copy_from_slice(&self.data[..take]);
        self.data = &self.data[take..];
        Ok(take)
    }
}

fn output(megabytes: usize) -> Vec<u8> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/screens");
    let mut screens = Vec::new();
    for agent in std::fs::read_dir(&root).unwrap().flatten() {
        for version in std::fs::read_dir(agent.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            for file in std::fs::read_dir(version.path().join("ansi"))
                .into_iter()
                .flatten()
                .flatten()
            {
                let text = std::fs::read_to_string(file.path()).unwrap();
                let mut drawn = b"\x1b[2J\x1b[H".to_vec();
                drawn.extend(
                    text.trim_end_matches('\n')
                        .replace('\n', "\r\n")
                        .into_bytes(),
                );
                screens.push(drawn);
            }
        }
    }
    assert!(!screens.is_empty(), "no recorded screens");
    let mut stream = Vec::with_capacity(megabytes << 20);
    'fill: loop {
        for screen in &screens {
            stream.extend_from_slice(screen);
            if stream.len() >= megabytes << 20 {
                break 'fill;
            }
        }
    }
    stream
}

fn null() -> std::fs::File {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .expect("/dev/null opens")
}

fn per_mb(time: Duration, bytes: usize) -> String {
    let mb = bytes as f64 / f64::from(1u32 << 20);
    format!("{:.2} ms/MB", time.as_secs_f64() * 1000.0 / mb)
}

fn main() {
    let megabytes = knob("SLATE_BENCH_MB", 16);
    let chunk = knob("SLATE_BENCH_CHUNK", 4096);
    let runs = knob("SLATE_BENCH_RUNS", 9).max(1);
    let stream = output(megabytes);
    println!(
        "relay pass-through of {} MB of recorded dialog screens in {chunk}-byte reads, {runs} runs",
        stream.len() >> 20
    );

    let mut plain = Vec::new();
    let mut fed = Vec::new();
    let mut behind = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let passed = pass_through(
            &mut Chunked {
                data: &stream,
                chunk,
            },
            &mut null(),
            None,
            |_| {},
        );
        plain.push(started.elapsed());
        assert_eq!(passed as usize, stream.len());

        let model = Arc::new(Mutex::new(ScreenModel::new(50, 200)));
        let feed = ModelFeed::start(Arc::clone(&model)).unwrap();
        let started = Instant::now();
        pass_through(
            &mut Chunked {
                data: &stream,
                chunk,
            },
            &mut null(),
            Some(&feed),
            |_| {},
        );
        let relayed = started.elapsed();
        fed.push(relayed);
        while !feed.caught_up() {
            std::thread::sleep(Duration::from_micros(200));
        }
        behind.push(started.elapsed().saturating_sub(relayed));
        assert!(model.lock().unwrap().text(false).lines().count() == 50);
    }

    let mut drawing = Vec::new();
    for _ in 0..runs {
        let mut model = ScreenModel::new(50, 200);
        let started = Instant::now();
        for piece in stream.chunks(chunk) {
            model.feed(piece);
        }
        drawing.push(started.elapsed());
    }

    let (plain, fed) = (median(&mut plain), median(&mut fed));
    println!(
        "  without the screen model: median {}",
        per_mb(plain, stream.len())
    );
    println!(
        "  with the screen model:    median {} ({:.2}x)",
        per_mb(fed, stream.len()),
        fed.as_secs_f64() / plain.as_secs_f64().max(1e-9)
    );
    println!(
        "  the model had drawn everything {:.1} ms (median) after the relay finished",
        median(&mut behind).as_secs_f64() * 1000.0
    );
    println!(
        "  the model alone draws at {} (median)",
        per_mb(median(&mut drawing), stream.len())
    );
}
