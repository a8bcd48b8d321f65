import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * CPU and memory of other processes, read from Linux's /proc. Every figure here is for one pid and all its
 * threads (the module loader's worker thread included); `childrenMs` is the CPU of child processes the pid has
 * already reaped, such as the local speech-to-text decoder a gateway runs once per utterance.
 */
export interface ProcessCpu {
  ownMs: number;
  childrenMs: number;
}

let ticksPerSecond: number | undefined;

function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** utime+stime and cutime+cstime of `pid`, in ms. */
export function processCpu(pid: number): ProcessCpu {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces and parentheses: count fields from its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const field = (n: number): number => Number(fields[n - 3] ?? Number.NaN);
  const msPerTick = 1000 / clockTicksPerSecond();
  return {
    ownMs: (field(14) + field(15)) * msPerTick,
    childrenMs: (field(16) + field(17)) * msPerTick,
  };
}

export function cpuBetween(from: ProcessCpu, to: ProcessCpu): ProcessCpu {
  return { ownMs: to.ownMs - from.ownMs, childrenMs: to.childrenMs - from.childrenMs };
}

/** Resident set size of `pid` in bytes; NaN when it cannot be read (the process has gone). */
export function processRssBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] ? Number(match[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** CPU of this process in ms (user + system), from `process.cpuUsage()`. */
export function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** Busy and total jiffies of all CPUs together (/proc/stat), to tell how busy the whole machine was. */
export interface MachineTicks {
  busy: number;
  total: number;
}

export function machineTicks(): MachineTicks | undefined {
  try {
    const first = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    const fields = first.trim().split(/\s+/).slice(1).map(Number);
    const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

/** Percent of all cores busy between two readings, everything on the machine counted. */
export function machineBusyPct(from: MachineTicks | undefined, to: MachineTicks | undefined): number {
  if (!from || !to || to.total <= from.total) return Number.NaN;
  return (100 * (to.busy - from.busy)) / (to.total - from.total);
}

export function loadAverage(): string {
  return os
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(', ');
}
