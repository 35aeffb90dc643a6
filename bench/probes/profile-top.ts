// For probes: a CPU profile of this process's JavaScript between two points, summed by function (self
// time), largest first. `const stop = await profileTop(); ...; console.log(await stop());`
import { Session } from 'node:inspector/promises';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

export async function profileTop(top = 25, intervalUs = 50): Promise<() => Promise<string>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = (await session.post('Profiler.stop')) as unknown as {
      profile: { nodes: Node[]; samples: number[]; timeDeltas: number[] };
    };
    session.disconnect();
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const self = new Map<string, number>();
    profile.samples.forEach((id, i) => {
      const f = byId.get(id)!.callFrame;
      const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(dist|node_modules)\//, '')}:${f.lineNumber + 1}`;
      self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
    });
    const total = [...self.values()].reduce((a, b) => a + b, 0);
    const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
    return [`profile: ${(total / 1000).toFixed(1)} ms sampled`, ...rows.map(([k, us]) => `  ${(us / 1000).toFixed(2)} ms  ${k}`)].join(
      '\n',
    );
  };
}
