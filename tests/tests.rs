mod claude; // the Claude Code adapter: transcript snapshots, process recognition, listing parsers
