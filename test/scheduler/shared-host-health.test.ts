/**
 * SharedHostManager's /health watch, on stand-in hosts and a stand-in clock: a host in use that
 * answers nothing for the limit is stopped and started again; its replacement is judged afresh.
 */
import { describe, expect, it } from 'vitest';
import { SharedHostManager, type SharedHostProcess } from '../../src/scheduler/shared-hosts/shared-host-manager.js';

interface FakeHost extends SharedHostProcess {
  stops: number;
  answers: boolean;
}

function fakeHost(n: number): FakeHost {
  let exit!: () => void;
  const exited = new Promise<void>((r) => (exit = r));
  const host: FakeHost = {
    url: `http://127.0.0.1:${9000 + n}`,
    pid: 1000 + n,
    alive: true,
    exited,
    stops: 0,
    answers: true,
    stop: async () => {
      host.stops++;
      (host as { alive: boolean }).alive = false;
      exit();
    },
  };
  return host;
}

const settle = () => new Promise((r) => setImmediate(r));

/** A manager over stand-in hosts (pushed to `hosts` as they start) whose /health fails while a host's `answers` is false. */
function managerOver(hosts: FakeHost[], onRestart?: (nodeset: string, url: string) => void): SharedHostManager {
  return new SharedHostManager({
    startHost: async () => {
      const h = fakeHost(hosts.length);
      hosts.push(h);
      return h;
    },
    health: async (url) => {
      if (!hosts.find((h) => h.url === url)!.answers) throw new Error('no answer');
    },
    hungAfterMs: 1000,
    ...(onRestart ? { onRestart } : {}),
  });
}

describe('shared host /health watch', () => {
  it('stops a host in use that answers nothing for hungAfterMs; the restarted host starts with a clean slate', async () => {
    const hosts: FakeHost[] = [];
    const restarted: string[] = [];
    const manager = managerOver(hosts, (_nodeset, url) => restarted.push(url));
    await manager.acquire(['planner'], 'run-a');
    const first = hosts[0]!;
    first.answers = false;
    manager.checkHealth(0);
    await settle();
    manager.checkHealth(999);
    await settle();
    expect(first.stops).toBe(0);
    manager.checkHealth(1000);
    await settle();
    expect(first.stops).toBe(1);
    await settle();
    expect(restarted).toEqual([hosts[1]!.url]);
    // The new host answers: however long after the old one's silence began, it is not stopped.
    manager.checkHealth(5000);
    await settle();
    manager.checkHealth(9000);
    await settle();
    expect(hosts[1]!.stops).toBe(0);
    await manager.close();
  });

  it('a host that went silent and then died is restarted, and its replacement does not inherit the silence', async () => {
    const hosts: FakeHost[] = [];
    const manager = managerOver(hosts);
    await manager.acquire(['planner'], 'run-a');
    hosts[0]!.answers = false;
    manager.checkHealth(0);
    await settle();
    await hosts[0]!.stop(); // dies on its own (the manager did not stop it)
    await settle();
    await settle();
    expect(hosts).toHaveLength(2);
    manager.checkHealth(2000);
    await settle();
    expect(hosts[1]!.stops).toBe(0);
    await manager.close();
  });

  it('a slow answer counts, a host no run uses is not judged, and its old silence is forgotten when a run takes it again', async () => {
    const host = fakeHost(0);
    let answer: (() => void) | undefined;
    let calls = 0;
    const manager = new SharedHostManager({
      startHost: async () => host,
      health: () => {
        calls++;
        if (!host.answers) return Promise.reject(new Error('no answer'));
        return new Promise<void>((r) => (answer = r));
      },
      hungAfterMs: 1000,
    });
    await manager.acquire(['planner'], 'run-a');
    manager.checkHealth(0);
    manager.checkHealth(5000);
    expect(calls).toBe(1); // one request at a time
    answer!();
    await settle();
    manager.checkHealth(6000);
    expect(host.stops).toBe(0);

    host.answers = false;
    answer!();
    await settle();
    manager.checkHealth(7000);
    await settle();
    manager.release('run-a');
    manager.checkHealth(9000);
    await settle();
    expect(host.stops).toBe(0);
    host.answers = true;
    await manager.acquire(['planner'], 'run-b');
    manager.checkHealth(9500);
    await settle();
    expect(host.stops).toBe(0);
    await manager.close();
  });
});
