import type { ChildProcess } from "node:child_process";

/**
 * Every child process a test of this Mocha process (a worker, or the main process with TEST_JOBS=1) started and that
 * has not exited yet. The helpers that start processes (child-service.ts, script-process.ts, admin-cli.ts) register
 * theirs here; a suite calls `after(stopStartedProcesses)` (or afterEach) so that nothing it started outlives it,
 * whatever failed, and a worker that exits kills what is still left (the last resort, synchronous).
 */
interface Started {
  child: ChildProcess;
  /** Signal the whole process group (the child was started detached, as its own group leader). */
  group: boolean;
}

const started = new Set<Started>();

export function trackProcess<T extends ChildProcess>(child: T, options: { group?: boolean } = {}): T {
  const entry = { child, group: options.group ?? false };
  if (child.exitCode !== null || child.signalCode !== null) return child;
  started.add(entry);
  child.once("exit", () => {
    // A group leader's exit can leave members behind: they are killed with the group later.
    if (!entry.group) started.delete(entry);
  });
  return child;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function kill(entry: Started, signal: NodeJS.Signals): void {
  try {
    if (entry.group && entry.child.pid) process.kill(-entry.child.pid, signal);
    else if (!exited(entry.child)) entry.child.kill(signal);
  } catch {
    // already gone
  }
}

function groupAlive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** How many tracked processes (or process groups) are still alive. */
export function startedProcessesAlive(): number {
  return [...started].filter((e) => (e.group ? groupAlive(e.child.pid) : !exited(e.child))).length;
}

/**
 * Kills every process started so far that is still running: SIGKILL (a test's end is no graceful stop; tests of the
 * graceful stop signal their process themselves first), then waits until each has exited.
 */
export async function stopStartedProcesses(): Promise<void> {
  const entries = [...started];
  started.clear();
  await Promise.all(
    entries.map(async (entry) => {
      const done = exited(entry.child)
        ? Promise.resolve()
        : new Promise<void>((resolve) => entry.child.once("exit", () => resolve()));
      kill(entry, "SIGKILL");
      await done;
      for (let i = 0; i < 50 && entry.group && groupAlive(entry.child.pid); i++)
        await new Promise((r) => setTimeout(r, 100));
    }),
  );
}

process.once("exit", () => {
  for (const entry of started) kill(entry, "SIGKILL");
});
