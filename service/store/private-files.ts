import fs from "node:fs";
import path from "node:path";

/**
 * Makes a directory tree private to the service's user: directories 0700, files 0600. The embedded database (PGlite)
 * unpacks its initial files world-readable and world-writable (0666) whatever the umask, while the files PostgreSQL
 * creates later are 0600; so the tree is tightened when the database opens and again when it closes.
 */
export function makePrivate(dir: string): void {
  setTreeModes(dir, 0o700, 0o600);
}

/** Sets every directory under `dir` (itself included) to `dirMode` and every file to `fileMode`. */
export function setTreeModes(dir: string, dirMode: number, fileMode: number): void {
  if (!fs.existsSync(dir)) return;
  fs.chmodSync(dir, dirMode);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const target = path.join(dir, entry.name);
    if (entry.isDirectory()) setTreeModes(target, dirMode, fileMode);
    else if (entry.isFile()) fs.chmodSync(target, fileMode);
  }
}

/** Creates a directory (and its missing parents) private to the service's user, or makes an existing one private. */
export function privateDirectory(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
}
