// A local folder as Iceberg target. Data files are hard links to the store's segments: no bytes are
// copied, and a segment a merge removes from the store stays readable under the table for as long
// as a snapshot names the link. On another filesystem a link is impossible and the file is copied
// (once: a path present with the right size is left alone).
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeFileAtomic, fsyncFile } from '../storage/fs-util.js';
import type { PutFileResult, Target } from './target.js';

export class LocalTarget implements Target {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  uri(rel: string): string {
    return pathToFileURL(join(this.root, rel)).href;
  }

  async list(relDir: string): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const walk = (d: string): void => {
      if (!existsSync(d)) return;
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.isFile()) out.set(relative(this.root, p), statSync(p).size);
      }
    };
    walk(join(this.root, relDir));
    return out;
  }

  async get(rel: string): Promise<Buffer | null> {
    try {
      return readFileSync(join(this.root, rel));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async put(rel: string, bytes: Uint8Array): Promise<void> {
    const abs = join(this.root, rel);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileAtomic(abs, bytes);
  }

  async putFile(rel: string, source: string, size: number): Promise<PutFileResult> {
    const abs = join(this.root, rel);
    try {
      if (statSync(abs).size === size) return { sent: 0 };
      rmSync(abs, { force: true }); // a copy cut short by a crash: made again
    } catch {
      // not there yet
    }
    mkdirSync(dirname(abs), { recursive: true });
    try {
      linkSync(source, abs);
      return { sent: 0 };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    }
    const tmp = `${abs}.tmp-${process.pid}`;
    copyFileSync(source, tmp);
    fsyncFile(tmp);
    renameSync(tmp, abs);
    return { sent: size };
  }

  async remove(rels: readonly string[]): Promise<void> {
    for (const rel of rels) rmSync(join(this.root, rel), { force: true });
  }
}
