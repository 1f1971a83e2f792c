import fs from 'node:fs';
import path from 'node:path';
import type { KernelManifest } from '../../kernels/sdk';

export interface FoundKernel {
  manifest: KernelManifest;
  dir: string;
  /** The compiled worker file Piscina loads. */
  workerFile: string;
}

/** Every `<dir>/<domain>/` with a manifest.js and a worker.js; the manifest's domain must match the folder. */
export function discoverKernels(dirs: string[]): FoundKernel[] {
  const found = new Map<string, FoundKernel>();
  for (const dir of dirs) {
    if (!fs.existsSync(dir)) throw new Error(`kernel folder ${dir} does not exist`);
    for (const name of fs.readdirSync(dir).sort()) {
      const kdir = path.join(dir, name);
      const manifestFile = path.join(kdir, 'manifest.js');
      const workerFile = path.join(kdir, 'worker.js');
      if (!fs.statSync(kdir).isDirectory() || !fs.existsSync(manifestFile)) continue;
      if (!fs.existsSync(workerFile)) throw new Error(`kernel "${name}": ${kdir} has a manifest but no worker.js`);
      let manifest: KernelManifest | undefined;
      try {
        const mod = require(manifestFile) as { default?: KernelManifest };
        manifest = mod.default;
      } catch (err) {
        throw new Error(`kernel "${name}": manifest failed to load: ${(err as Error).message}`);
      }
      if (!manifest || typeof manifest !== 'object' || !manifest.tasks) throw new Error(`kernel "${name}": the manifest's default export is not defineKernel(...)`);
      if (manifest.domain !== name) throw new Error(`kernel folder "${name}" declares domain "${manifest.domain}"; they must match`);
      if (found.has(name)) throw new Error(`kernel "${name}" is found in two folders`);
      found.set(name, { manifest, dir: kdir, workerFile });
    }
  }
  return [...found.values()];
}
