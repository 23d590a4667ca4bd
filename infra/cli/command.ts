// What every `trajflow <command>` module exports: the table in bin/main.ts loads these lazily, and each
// part (envs, processors, learner, storage, api) defines its own without depending on the table.
export interface Command {
  readonly summary: string;
  readonly usage: string;
  run(args: string[]): Promise<number>;
}
