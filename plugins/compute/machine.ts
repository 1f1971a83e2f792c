// Reads this machine: GPUs through nvidia-smi (when installed), CPU load from /proc/stat.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import type { GpuDevice } from '../../core/contracts/compute';

const QUERY = 'index,uuid,name,memory.total,memory.used,utilization.gpu,temperature.gpu,power.draw';

/** One device as nvidia-smi reports it. */
export type GpuReading = Omit<GpuDevice, 'id' | 'provider' | 'region'> & { uuid: string };

/** nvidia-smi prints "[N/A]" or "[Not Supported]" for what a device does not report. */
const num = (s: string | undefined): number | null => {
  const v = Number(s?.trim());
  return s !== undefined && s.trim() !== '' && Number.isFinite(v) ? v : null;
};

export function parseNvidiaSmi(csv: string): GpuReading[] {
  return csv
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const f = l.split(',').map((x) => x.trim());
      return { index: Number(f[0]), uuid: f[1] ?? '', name: f[2] ?? '', memory_total_mb: num(f[3]), memory_used_mb: num(f[4]), utilization_pct: num(f[5]), temperature_c: num(f[6]), power_w: num(f[7]) };
    })
    .filter((g) => Number.isInteger(g.index));
}

/** The machine's GPUs; none when nvidia-smi is not installed (or finds no device). */
export function readGpus(binary: string): Promise<GpuReading[]> {
  return new Promise((resolve) => {
    execFile(binary, [`--query-gpu=${QUERY}`, '--format=csv,noheader,nounits'], { timeout: 5000 }, (err, stdout) => {
      // No binary (ENOENT) or no driver/device (non-zero exit): this machine has no usable GPU.
      resolve(err ? [] : parseNvidiaSmi(stdout));
    });
  });
}

async function cpuTimes(): Promise<{ idle: number; total: number } | null> {
  try {
    const line = (await fs.readFile('/proc/stat', 'utf8')).split('\n')[0]!;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: idle time is idle + iowait.
    return { idle: (v[3] ?? 0) + (v[4] ?? 0), total: v.slice(0, 8).reduce((a, b) => a + b, 0) };
  } catch {
    return null;
  }
}

/** Busy share of all cores over `ms`, from two reads of /proc/stat; null without /proc. */
export async function cpuUtilisation(ms: number): Promise<number | null> {
  const a = await cpuTimes();
  if (!a) return null;
  await new Promise((r) => setTimeout(r, ms));
  const b = await cpuTimes();
  if (!b || b.total === a.total) return null;
  return Math.round((1 - (b.idle - a.idle) / (b.total - a.total)) * 10_000) / 100;
}

/** MemAvailable from /proc/meminfo (what the kernel says can be used), else os.freemem(). */
export async function memoryAvailable(): Promise<number> {
  try {
    const m = /MemAvailable:\s+(\d+) kB/.exec(await fs.readFile('/proc/meminfo', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    /* no /proc: fall back */
  }
  return os.freemem();
}
