/**
 * The W&B SDK in a process of its own (wandb.ts starts it): @wandb/sdk 0.5 throws from an event
 * listener when the server refuses the run, which ends the process it runs in, and installs its
 * own SIGINT handler. Here such an end costs the tracking only. The parent speaks over the IPC
 * channel: init, log, finish; this process answers ready or error.
 */
import wandb from '@wandb/sdk';

type Message =
  | {
      readonly type: 'init';
      readonly project: string;
      readonly entity?: string;
      readonly name: string;
      readonly config: Record<string, unknown>;
    }
  | { readonly type: 'log'; readonly step: number; readonly data: Record<string, number> }
  | { readonly type: 'finish'; readonly code: number };

type Run = Awaited<ReturnType<typeof wandb.init>>;
let run: Run | undefined;

const send = (m: unknown) => process.send?.(m);

process.on('message', (m: Message) => {
  if (m.type === 'init') {
    wandb
      .init({ project: m.project, ...(m.entity ? { entity: m.entity } : {}), name: m.name, config: m.config })
      .then((r) => {
        run = r;
        send({ type: 'ready', url: r.url() });
      })
      .catch((e: unknown) => {
        send({ type: 'error', message: e instanceof Error ? e.message : String(e) });
        process.exit(1);
      });
  } else if (m.type === 'log') {
    run?.log(m.data, m.step);
  } else if (m.type === 'finish') {
    (run ? run.finish(m.code) : Promise.resolve()).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  }
});
// the parent ended (or gave up on this process): nothing is left to send to
process.on('disconnect', () => process.exit(0));
