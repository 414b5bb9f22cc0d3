mod codex; // the Codex CLI adapter: rollouts, index, file names, processes
